#!/usr/bin/env bash
# `make results`: run every lab on this machine's GPU and keep what they
# measured, for `make plots` and for comparing one GPU with another.
#
#   plots/results.sh PROGRAM...      (make passes the labs: lab00 lab01 ...)
#
# Each program runs with --csv; lab04 also runs once per kernel ratio of the
# sweep (figure 3); lab04, lab07, lab08 and lab11 run once more with --quick
# --trace for their timelines (figures 4, 6, 7 and 8). lab13's report is
# figure 9; on one GPU it is waived (exit 3). lab14's is figure 10 (on one
# GPU without its two-GPU part 3: --no-comm). The solutions sol01, sol04,
# sol06 and sol08, when given, run once each, traced: --quick --csv --trace,
# for the schedule figures (11-14).
# Everything goes into results/<gpu-name>-<date>/ (a second folder of the
# same day gets -2, -3):
#   labNN.csv            the report (labNN.run2.csv ... with RUNS > 1)
#   lab04-ratio-R.csv    lab04 --kernel-ratio R, for each R in SWEEP_RATIOS
#   labNN-trace.json     the Chrome trace of labNN --quick (lab04, lab07, lab08, lab11);
#                        labNN-trace.txt its report
#   solNN-trace.json     the Chrome trace of solNN --quick (sol01, sol04, sol06, sol08);
#                        solNN-trace.csv its report, which holds the model's bound
#   labNN.err            whatever a program wrote to stderr, when it did
#   meta                 GPU, driver, CUDA, date, command, and how each run ended
#   spread.csv           with RUNS > 1: each lab's key number, min, median and max
#
# How a run ends: exit 3 (cannot run here) is recorded as waived, not a
# failure; exit 4 (effect not observed) is recorded and its results kept;
# anything else but 0 is a failure: the rest still run, and this exits 1.
#
# Without a usable GPU this says so in one line and exits 3, as a lab does:
# GPU_PROBE asks once, before any lab runs; without it, a run in which every
# lab was waived ends with exit 3 too.
#
# Environment: RUNS (default 1), BINDIR (where the programs are, default .),
# RESULTS_ROOT (default results), NVCC and PYTHON (for the meta file and the
# spread table), LAB_TIMEOUT (seconds per program, default 600), GPU_PROBE
# (build/tests/gpu_probe: exits 3 with the reason where no GPU is usable).
set -u
cd "$(dirname "$0")/.." || exit 1

runs=${RUNS:-1}
bindir=${BINDIR:-.}
root=${RESULTS_ROOT:-results}
limit=${LAB_TIMEOUT:-600}
python=${PYTHON:-python3}

die() { echo "make results: $*" >&2; exit 1; }
cannot_run() { echo "make results: cannot run here: $*" >&2; exit 3; }
[[ $runs =~ ^[1-9][0-9]?$ ]] || die "RUNS must be a whole number from 1 to 99 (got '$runs')"
(($#)) || die "no programs given (make results passes the labs)"
for p in "$@"; do
    [ -x "$bindir/$p" ] || die "$bindir/$p is not built: run make first"
done
if [ -n "${GPU_PROBE:-}" ]; then
    why=$("$GPU_PROBE" 2>&1 >/dev/null)
    # Only its "cannot run here" stops us: anything else, the labs will name.
    [ $? -ne 3 ] || cannot_run "${why#*cannot run here: }; nothing was run or recorded"
fi

# NVLink multicast (NVLS) can take a shared host's GPUs out of service: lab13
# turns it off before its first NCCL call, and every run here inherits it off.
export NCCL_NVLS_ENABLE=0

# lab14's part 3 needs two GPUs and exits 3 without them, which would waive
# parts 1 and 2 (figure 10) with it: on one GPU they run alone (--no-comm).
visible_gpus() {
    if [ -n "${CUDA_VISIBLE_DEVICES+x}" ]; then
        tr ',' '\n' <<<"$CUDA_VISIBLE_DEVICES" | grep -c .
    else
        nvidia-smi -L 2>/dev/null | grep -c '^GPU'
    fi
}
lab14_args=()
(($(visible_gpus) >= 2)) || lab14_args=(--no-comm)

mkdir -p "$root" || die "cannot create $root/"
stage=$(mktemp -d "$root/.partial-XXXXXX") || die "cannot write in $root/"
trap 'rm -rf "$stage"; exit 130' INT TERM

# ---- one run: name, output file, command; the outcome goes to the meta file ----

declare -A outcome      # name -> "ok", "waived (exit 3): why" ...
declare -A commands     # name -> the command line
# The kernel ratios of lab04's sweep: from a kernel 1/8 as long as an upload
# to 8 times as long, balanced (1) in the middle.
SWEEP_RATIOS="0.125 0.25 0.5 1 2 4 8"
# The labs traced for a figure (each its timeline), when they are given.
TRACED="lab04 lab07 lab08 lab11"
traced=()
for p in $TRACED; do [[ " $* " == *" $p "* ]] && traced+=("$p"); done
# The solutions whose schedule a figure draws: run traced only, not --csv alone.
SCHEDULES="sol01 sol04 sol06 sol08"
labs=() schedules=()
for p in "$@"; do
    if [[ " $SCHEDULES " == *" $p "* ]]; then schedules+=("$p"); else labs+=("$p"); fi
done
extras=$((${#traced[@]} + ${#schedules[@]}))  # lab04's sweep and the traces
[[ " $* " == *" lab04 "* ]] && extras=$((extras + $(wc -w <<<"$SWEEP_RATIOS")))
total=$((${#labs[@]} * runs + extras))
done_count=0
failures=0
gpu=""

# run NAME OUT PROGRAM ARGS...: runs it with stdout into $stage/OUT, says how it ended.
run() {
    local name=$1 out=$2 err="$stage/$1.err" status started seconds said
    shift 2
    done_count=$((done_count + 1))
    printf '  [%2d/%d] %-22s ' "$done_count" "$total" "$name"
    started=$(date +%s.%N)
    if command -v timeout >/dev/null; then
        timeout "$limit" "$bindir/$@" >"$stage/$out" 2>"$err"
    else
        "$bindir/$@" >"$stage/$out" 2>"$err"
    fi
    status=$?
    seconds=$(awk -v a="$started" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
    said=$(grep -v '^$' "$err" | tail -n 1)
    case $status in
        0) outcome[$name]="ok" ;;
        3) outcome[$name]="waived (exit 3): ${said:-cannot run here}"
           rm -f "$stage/$out" ;;
        4) outcome[$name]="effect not observed (exit 4): results kept" ;;
        124) outcome[$name]="FAILED: timed out after $limit s"; failures=$((failures + 1)) ;;
        *) outcome[$name]="FAILED (exit $status): ${said:-nothing on stderr}"
           failures=$((failures + 1)) ;;
    esac
    [ -s "$err" ] || rm -f "$err"
    printf '%-8s %s\n' "$seconds s" "${outcome[$name]}"
    commands[$name]="$bindir/$*"
    if [ -z "$gpu" ] && [ -f "$stage/$out" ]; then
        gpu=$(awk -F, '$2 == "device" && $3 == "name" { sub(/^[^,]*,device,name,/, "");
                       sub(/,text$/, ""); gsub(/^"|"$/, ""); gsub(/""/, "\""); print; exit }' \
                  "$stage/$out")
    fi
}

echo "make results: $total runs (${#labs[@]} programs x RUNS=$runs$( ((extras)) && echo ", lab04's sweep and the traces"))"
for ((r = 1; r <= runs; r++)); do
    for p in "${labs[@]}"; do
        own=()
        [ "$p" = lab14 ] && own=("${lab14_args[@]}")
        if ((r == 1)); then run "$p" "$p.csv" "$p" "${own[@]}" --csv
        else run "$p.run$r" "$p.run$r.csv" "$p" "${own[@]}" --csv; fi
    done
    if ((r == 1)) && [[ " $* " == *" lab04 "* ]]; then
        for ratio in $SWEEP_RATIOS; do
            run "lab04-ratio-$ratio" "lab04-ratio-$ratio.csv" lab04 --kernel-ratio "$ratio" --csv
        done
    fi
    if ((r == 1)); then
        for p in "${traced[@]}"; do
            run "$p-trace" "$p-trace.txt" "$p" --quick --trace "$stage/$p-trace.json"
        done
        for p in "${schedules[@]}"; do
            run "$p-trace" "$p-trace.csv" "$p" --quick --csv --trace "$stage/$p-trace.json"
        done
    fi
done

# ---- where it goes, and the meta file ----------------------------------------------

if [ -z "$gpu" ]; then
    rm -rf "$stage"
    ((failures)) || cannot_run "no lab could run, so nothing was recorded (see the lines above)"
    die "no lab could run here, so nothing was recorded (see the lines above)"
fi
date=$(date +%F)
# "NVIDIA H100 80GB HBM3" -> nvidia-h100-80gb-hbm3: lower case, anything else a '-'
base="$root/$(printf '%s' "$gpu" | tr '[:upper:]' '[:lower:]' | tr -cs 'a-z0-9._-' '-' |
              sed 's/^-*//; s/-*$//')-$date"
folder=$base
for ((n = 2; ; n++)); do
    [ -e "$folder" ] || break
    folder="$base-$n"
done
mv "$stage" "$folder" || die "cannot move the results to $folder"
trap - INT TERM

smi() { command -v nvidia-smi >/dev/null && nvidia-smi "$@" 2>/dev/null; }
driver=$(smi --query-gpu=driver_version --format=csv,noheader | head -n 1)
cuda_driver=$(smi | sed -n 's/.*CUDA Version: *\([0-9.]*\).*/\1/p' | head -n 1)
toolkit=$("${NVCC:-nvcc}" --version 2>/dev/null | sed -n 's/.*release \([0-9.]*\).*/\1/p')
{
    echo "# streamlab results: how they were made (plots/results.sh)"
    echo "gpu: $gpu"
    echo "driver: ${driver:-unknown}"
    echo "cuda: driver API ${cuda_driver:-unknown}, toolkit ${toolkit:-unknown}"
    echo "date: $date"
    echo "command: make results RUNS=$runs"
    echo "runs: $runs"
    for name in $(printf '%s\n' "${!outcome[@]}" | sort -V); do
        echo "$name: ${outcome[$name]}"
        echo "command $name: ${commands[$name]/$stage\//}"
    done
} >"$folder/meta"

echo "make results: written to $folder/"
if ((runs > 1)); then
    echo "make results: each lab's key number over $runs runs (as figure 1 compares them)"
    "$python" plots/plot.py spread "$folder" || failures=$((failures + 1))
fi
if ((failures)); then
    echo "make results: $failures run(s) FAILED (see $folder/meta and the .err files)" >&2
    exit 1
fi
echo "make results: done; draw them with: make plots RESULTS=$folder"
