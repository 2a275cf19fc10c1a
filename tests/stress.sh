#!/usr/bin/env bash
# `make stress`: run every lab many times, beside a background load if asked,
# and count per verdict how often its effect was observed. That count is the
# false-negative rate of the verdict's threshold on this machine, and how an
# instructor checks a course machine before the students do.
#
#   tests/stress.sh PROGRAM...      (make passes the labs, or STRESS_PROGRAMS)
#
# Each program runs RUNS times in each of MODES: quick (--quick --csv) and
# default (--csv). The runs are interleaved, run 1 of everything, then run 2
# of everything ..., so that a slow minute of the machine is spread over
# every lab instead of landing on one. Everything goes into
# results/stress-<gpu-name>-<date>/ (a second folder of the same day gets
# -2, -3), or STRESS_OUT=dir:
#   labNN.MODE.runKK.csv    each run's report; labNN.MODE.runKK.err its stderr, when any
#   runs.csv                how each run ended: program,mode,run,exit_code,seconds,report
#   summary.txt, .csv       the table printed at the end (tests/tools/stress_summary.py)
#   meta                    GPU, driver, date, settings; load-*.log what the loads said
#
# LOAD: none (default); gpu, another process keeping the GPU busy with kernels
# and copies (tests/tools/gpu_load.cu); host, threads copying host memory
# (tests/tools/host_load.c), which pageable copies and host timing compete
# with; both. A load runs for the whole stress run and is stopped at the end.
#
# How a run ends: exit 0 or 4 is counted (4: the effect was not observed,
# which is what this measures); exit 3 (cannot run here) is counted as
# waived, not a failure, though the verdicts it judged before stopping count
# (lab14 on one GPU judges parts 1 and 2); exit 1 (results wrong), a crash
# or a timeout (124) is a failure: the rest still run, and this exits 1.
# STRICT=1 also exits 1 when any verdict was not observed in every run.
# Usage errors exit 2; when every run was waived and none judged a verdict,
# nothing could run here: exit 3.
#
# Environment: RUNS (1 to 1000, default 1), MODES (default "quick default"),
# LOAD, STRICT, STRESS_OUT, RESULTS_ROOT (default results), BINDIR (where the
# programs are, default .), LAB_TIMEOUT (seconds per run, default 120),
# GPU_LOAD and HOST_LOAD (the load programs; make passes them).
set -u
cd "$(dirname "$0")/.." || exit 1

runs=${RUNS:-1}
modes=${MODES:-quick default}
load=${LOAD:-none}
strict=${STRICT:-0}
bindir=${BINDIR:-.}
root=${RESULTS_ROOT:-results}
limit=${LAB_TIMEOUT:-120}
gpu_load=${GPU_LOAD:-build/tests/gpu_load}
host_load=${HOST_LOAD:-build/tests/host_load}

usage() { echo "make stress: $*" >&2; exit 2; }
die() { echo "make stress: $*" >&2; exit 1; }

# ---- what was asked: anything wrong is a usage error, before anything runs ----

[[ $runs =~ ^[1-9][0-9]{0,2}$|^1000$ ]] ||
    usage "RUNS must be a whole number from 1 to 1000 (got '$runs')"
[[ $limit =~ ^[1-9][0-9]{0,3}$ ]] ||
    usage "LAB_TIMEOUT must be a whole number of seconds from 1 to 9999 (got '$limit')"
[[ $strict =~ ^[01]?$ ]] || usage "STRICT must be 1 or 0 (got '$strict')"
mode_list=()
read -ra words <<<"$modes"
for m in "${words[@]}"; do
    case $m in
    quick | default) [[ " ${mode_list[*]} " == *" $m "* ]] || mode_list+=("$m") ;;
    *) usage "MODES takes quick and default (got '$m' in '$modes')" ;;
    esac
done
((${#mode_list[@]})) || usage "MODES is empty: give quick, default or both"
case $load in
none | gpu | host | both) ;;
*) usage "LOAD must be none, gpu, host or both (got '$load')" ;;
esac
(($#)) ||
    usage "no programs given (make stress passes the labs, or STRESS_PROGRAMS=\"lab00 lab02\")"
for p in "$@"; do
    [ -x "$bindir/$p" ] ||
        usage "$bindir/$p is not built: is '$p' a program make builds? (make list)"
done
loads=()
[[ $load == gpu || $load == both ]] && loads+=(gpu)
[[ $load == host || $load == both ]] && loads+=(host)
for l in "${loads[@]}"; do
    tool=$gpu_load
    [ "$l" = host ] && tool=$host_load
    [ -x "$tool" ] || die "LOAD=$load needs $tool: make stress builds it"
done
command -v timeout >/dev/null || die "needs timeout (GNU coreutils) to stop a run that hangs"
command -v python3 >/dev/null || die "needs python3 for the summary table"

# ---- where it goes --------------------------------------------------------------

smi() { command -v nvidia-smi >/dev/null && nvidia-smi "$@" 2>/dev/null; }
gpu=$(smi --query-gpu=name --format=csv,noheader -i 0 | head -n 1)
gpu=${gpu:-unknown-gpu}
if [ -n "${STRESS_OUT:-}" ]; then
    folder=$STRESS_OUT
    # runs of two stress runs in one folder would be counted together
    [ -z "$(ls -A "$folder" 2>/dev/null)" ] ||
        usage "STRESS_OUT=$folder is not empty: give a new folder"
    mkdir -p "$folder" || die "cannot create $folder/"
else
    # "NVIDIA H100 80GB HBM3" -> nvidia-h100-80gb-hbm3, as make results names it
    base="$root/stress-$(printf '%s' "$gpu" | tr '[:upper:]' '[:lower:]' | tr -cs 'a-z0-9._-' '-' |
                        sed 's/^-*//; s/-*$//')-$(date +%F)"
    mkdir -p "$root" || die "cannot create $root/"
    folder=$base
    for ((n = 2; ; n++)); do
        if [ ! -e "$folder" ]; then
            mkdir "$folder" || die "cannot create $folder/"
            break
        fi
        folder="$base-$n"
    done
fi

# ---- the loads: started before the first run, stopped on any way out ----------

# gpu_load runs for at most 600 s, so each load runs in chunks of that length
# and is started afresh between two runs when the next run could outlast it.
chunk=600
declare -A load_pid load_since
lab_pid=""

# load_start NAME: starts load NAME (gpu or host) and waits, 30 s at most, for
# the line starting "ready" that says the load is on.
load_start() {
    local name=$1 tool=$gpu_load log="$folder/load-$1.log" before alive
    [ "$name" = host ] && tool=$host_load
    before=$(grep -c '^ready' "$log" 2>/dev/null)
    "$tool" --seconds "$chunk" >>"$log" 2>&1 &
    load_pid[$name]=$!
    load_since[$name]=$SECONDS
    for _ in $(seq 300); do
        # alive first, ready second: a load that said ready and ended at once is not an error here
        kill -0 "${load_pid[$name]}" 2>/dev/null
        alive=$?
        (($(grep -c '^ready' "$log") > ${before:-0})) && return 0
        ((alive == 0)) || die "LOAD=$load: $tool stopped: $(tail -n 3 "$log")"
        sleep 0.1
    done
    die "LOAD=$load: $tool did not say ready in 30 s (see $log)"
}

load_stop() {
    local pid=${load_pid[$1]:-}
    [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
    load_pid[$1]=""
}

# load_keep: before each run, every load still on and sure to outlast the run.
load_keep() {
    local name
    for name in "${loads[@]}"; do
        if ! kill -0 "${load_pid[$name]}" 2>/dev/null; then
            echo "make stress: the $name load had stopped; starting it again" >&2
            echo "$(date '+%F %T'): the $name load had stopped; started again" >>"$folder/meta"
            load_start "$name"
        elif ((SECONDS - load_since[$name] > chunk - limit - 15)); then
            load_stop "$name"
            load_start "$name"
        fi
    done
}

# shellcheck disable=SC2317 # the EXIT trap calls it
finish() {
    local name
    [ -n "$lab_pid" ] && kill "$lab_pid" 2>/dev/null # timeout passes it on to the lab
    for name in "${loads[@]}"; do load_stop "$name"; done
}
trap finish EXIT
trap 'echo; echo "make stress: stopped; what ran is in $folder/, its table:" \
    "python3 tests/tools/stress_summary.py $folder" >&2; exit 130' INT
trap 'exit 143' TERM

# ---- the meta file, before the first run, so a stopped run still has one -------

driver=$(smi --query-gpu=driver_version --format=csv,noheader -i 0 | head -n 1)
programs="$*"
{
    echo "# streamlab stress run: how it was made (tests/stress.sh)"
    echo "gpu: $gpu"
    echo "driver: ${driver:-unknown}"
    echo "date: $(date '+%F %T')"
    echo "command: make stress RUNS=$runs MODES=\"${mode_list[*]}\" LOAD=$load" \
        "STRESS_PROGRAMS=\"$programs\"$( ((strict)) && echo " STRICT=1")"
    echo "runs: $runs"
    echo "modes: ${mode_list[*]}"
    echo "load: $load"
    echo "programs: $programs"
    echo "timeout per run: $limit s"
    echo "host: $(uname -n), $(nproc) CPUs"
} >"$folder/meta"
echo "program,mode,run,exit_code,seconds,report" >"$folder/runs.csv"

# ---- the runs -----------------------------------------------------------------------

per_round=$(($# * ${#mode_list[@]}))
echo "make stress: $runs x $per_round runs ($# programs x ${#mode_list[@]} modes)," \
    "LOAD=$load, at most $limit s each, into $folder/"
for name in "${loads[@]}"; do
    load_start "$name"
    echo "make stress: $name load on: $(grep '^ready' "$folder/load-$name.log" | tail -n 1)"
done

width=$((${#runs} > 2 ? ${#runs} : 2)) # run07, or run007 with RUNS >= 100
started=$SECONDS
for ((r = 1; r <= runs; r++)); do
    round_start=$SECONDS
    notes=()
    for p in "$@"; do
        for m in "${mode_list[@]}"; do
            load_keep
            args=(--csv)
            [ "$m" = quick ] && args=(--quick --csv)
            printf -v stem '%s.%s.run%0*d' "$p" "$m" "$width" "$r"
            t0=$(date +%s.%N)
            # in the background, so that Ctrl-C stops the wait at once (see finish)
            timeout --kill-after=10 "$limit" "$bindir/$p" "${args[@]}" \
                >"$folder/$stem.csv" 2>"$folder/$stem.err" &
            lab_pid=$!
            wait "$lab_pid" 2>/dev/null # (bash would print "Segmentation fault" and such itself)
            status=$?
            lab_pid=""
            seconds=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
            [ -s "$folder/$stem.err" ] || rm -f "$folder/$stem.err"
            echo "$p,$m,$r,$status,$seconds,$stem.csv" >>"$folder/runs.csv"
            case $status in
            0) ;;
            3) notes+=("$p $m: waived") ;;
            4) notes+=("$p $m: exit 4") ;;
            124) notes+=("$p $m: TIMED OUT after $limit s, FAILED") ;;
            *) notes+=("$p $m: exit $status, FAILED") ;;
            esac
        done
    done
    # one line a round: how long it took, what did not exit 0, and the time left
    left=$(((SECONDS - started) * (runs - r) / r))
    line=$(printf '  run %*d/%d  %4d s  ' "$width" "$r" "$runs" $((SECONDS - round_start)))
    if ((${#notes[@]})); then
        line+=$(printf '%s; ' "${notes[@]}")
        line=${line%; }
    else
        line+="all exit 0"
    fi
    if ((r < runs && left > 0 && left < 120)); then
        line+="  (about $left s left)"
    elif ((r < runs && left > 0)); then
        line+="  (about $(((left + 59) / 60)) min left)"
    fi
    echo "$line"
done

for name in "${loads[@]}"; do load_stop "$name"; done
echo "ended: $(date '+%F %T')" >>"$folder/meta"
echo
summary=(python3 tests/tools/stress_summary.py "$folder")
((strict)) && summary+=(--strict)
"${summary[@]}"
status=$?
echo "make stress: written to $folder/ (summary.txt, summary.csv)"
exit "$status"
