#!/usr/bin/env bash
# make sanitize: every program under compute-sanitizer's memcheck (with leak
# checking and stream-ordered race tracking), initcheck and synccheck; one
# line per program and tool; exit 0 when every run is clean, 1 when any is
# not, 3 when this machine cannot run them.
#
#   tests/tools/sanitize.sh [PROGRAM...]     default: every program `make list` gives
#   tests/tools/sanitize.sh --judge LOG PROGRAM TOOL STATUS
#                                            the verdict on one run's log (the CPU tests use it)
#   tests/tools/sanitize.sh --arguments PROGRAM
#                                            what PROGRAM runs with under the sanitizer
#
# Environment: SANITIZE_TOOLS (default "memcheck initcheck synccheck"),
# SANITIZE_JOBS (runs at once; default half the CPUs, at most 4),
# SANITIZE_TIMEOUT (seconds one run may take; default 180), SANITIZE_ARGS
# (replaces the arguments chosen below, for every program), SANITIZE_DECLARED
# (the findings programs make on purpose; default tests/tools/sanitize-declared.txt),
# SANITIZE_LOGS (default build/sanitize), SANITIZER (the compute-sanitizer to
# use; found on PATH or in CUDA_HOME otherwise), CUDA_HOME, BINDIR, GPU_PROBE.
#
# A run is clean when the sanitizer's ERROR SUMMARY counts nothing but
# declared findings, and the program ended by itself with a documented exit
# code other than 1 and 2. Exit 4 is clean: under a sanitizer every kernel and
# copy is many times slower, and with other runs beside it the GPU is shared,
# so a lab's timing verdicts mean nothing here; its results must still be right.
set -u
cd "$(dirname "$0")/../.." || exit 3
declared_file=${SANITIZE_DECLARED:-tests/tools/sanitize-declared.txt}

# ---- the verdict on one log --------------------------------------------------

# declared PROGRAM TOOL HEADLINE: 0 when the declarations file lists it.
declared() {
    local prog tool pattern
    [ -f "$declared_file" ] || return 1
    while read -r prog tool pattern; do
        case $prog in '' | '#'*) continue ;; esac
        # shellcheck disable=SC2053 # the first two fields are globs on purpose
        [[ $1 == $prog && $2 == $tool ]] || continue
        [[ $3 =~ $pattern ]] && return 0
    done <"$declared_file"
    return 1
}

# judge LOG PROGRAM TOOL STATUS: prints "ok|FAIL|skip<TAB>detail"; returns 0
# unless it is FAIL. STATUS is what the run exited with (124 or 137: timeout).
# compute-sanitizer marks its lines with "========= "; a finding starts with
# an unindented line after that mark, its details are indented. The program's
# own output shares the log and is written in blocks, so a mark can land in
# the middle of one of its lines: the marks are looked for anywhere in a line.
judge() {
    local log=$1 prog=$2 tool=$3 status=$4 summary found=0 printed=0 first="" line head
    case $status in
    124 | 137)
        printf 'FAIL\ttimed out after %s s\n' "${SANITIZE_TIMEOUT:-180}"
        return 1
        ;;
    esac
    summary=$(grep -aoE '========= ERROR SUMMARY: [0-9]+ error' "$log" | tail -1 | grep -oE '[0-9]+')
    if [ -z "$summary" ]; then
        printf 'FAIL\tno ERROR SUMMARY: the sanitizer did not finish (status %s)\n' "$status"
        return 1
    fi
    while IFS= read -r line; do
        head=${line#========= }
        case $head in
        COMPUTE-SANITIZER* | "ERROR SUMMARY"* | "LEAK SUMMARY"* | "Target application returned"* | "RACECHECK SUMMARY"*) continue ;;
        esac
        printed=$((printed + 1))
        if declared "$prog" "$tool" "$head"; then
            found=$((found + 1))
        elif [ -z "$first" ]; then
            first=$head
        fi
    done < <(grep -aoE '========= [^ ].*' "$log")
    if [ -n "$first" ]; then
        [ "$printed" -gt "$summary" ] && summary=$printed # a leak the summary did not count
        printf 'FAIL\t%s finding%s: %s\n' "$summary" "$([ "$summary" = 1 ] || echo s)" "$first"
        return 1
    fi
    if [ "$summary" -gt "$printed" ]; then
        printf 'FAIL\t%s findings, %s of them printed: see the log\n' "$summary" "$printed"
        return 1
    fi
    local also=""
    [ "$found" -gt 0 ] && also=", $found declared finding$([ "$found" = 1 ] || echo s) only"
    case $status in
    0 | 4) printf 'ok\texit %s%s\n' "$status" "$also" ;;
    3) printf 'skip\t%s\n' "$(grep -am1 ': cannot run here: ' "$log" | sed 's/.*cannot run here: //')" ;;
    1)
        printf 'FAIL\texit 1, results wrong: %s\n' \
            "$(grep -am1 -E '\[FAIL\]|CUDA error at' "$log" | sed 's/^ *//')"
        return 1
        ;;
    2)
        printf 'FAIL\texit 2, a usage error: %s\n' "$(grep -am1 -vE '^=========' "$log")"
        return 1
        ;;
    *)
        printf 'FAIL\tended with status %s (a crash or a signal)\n' "$status"
        return 1
        ;;
    esac
}


# ---- what each program runs with -----------------------------------------------

# The sanitizer checks every access of every kernel and copy: 10 to 100 times
# slower, and on an H100 initcheck and synccheck did not finish lab00 --quick
# in 5 minutes. The code paths are the same at any size, so every program
# runs --quick --reps 2 with each of its own numbers at the smallest value its
# --help allows (sizes of 1 MiB, the shortest kernels; --retries 0: a slowed
# run is not re-measured), read from --help so a
# new lab needs no entry here. Exceptions, each with its reason:
arguments() {
    local prog=$1 base name min
    base=$(basename "$prog")
    if [ -n "${SANITIZE_ARGS+set}" ]; then
        echo "$SANITIZE_ARGS"
        return
    fi
    local args="--quick --reps 2"
    while read -r name _ min _; do # NAME KIND MIN MAX
        case $name in --device | --reps) continue ;; esac
        case "$base:$name" in
        # The urgent launches must land inside the background. Its blocks are
        # made long (20 ms for the 10 waves) so that the sanitizer's slower
        # launches still arrive before it ends (else lab05's verdict
        # samples_mid_background is "no").
        lab05:--block-us | ex05:--block-us | sol05:--block-us) min=2000 ;;
        esac
        args+=" $name $min"
    done < <(tests/tools/numeric_options.sh "$(program_path "$prog")")
    # lab10 frees a buffer under a reader on purpose (part 4's lesson):
    # memcheck's --track-stream-ordered-races names it and ends the context,
    # so here it runs its two safe frees, which must be clean; the unsafe one
    # is shown and tested in tests/gpu_lab10.bats.
    case $base in lab10) args+=" --free safe" ;; esac
    echo "$args"
}

program_path() {
    case $1 in */*) echo "$1" ;; *) echo "${BINDIR:-.}/$1" ;; esac
}

case ${1:-} in
--judge)
    [ $# -eq 5 ] || { echo "usage: $0 --judge LOG PROGRAM TOOL STATUS" >&2; exit 2; }
    judge "$2" "$3" "$4" "$5"
    exit
    ;;
--arguments)
    [ $# -eq 2 ] || { echo "usage: $0 --arguments PROGRAM" >&2; exit 2; }
    arguments "$2"
    exit
    ;;
esac

# ---- running them ------------------------------------------------------------------

find_sanitizer() {
    local c
    if [ -n "${SANITIZER:-}" ]; then # named: that one or none
        [ -x "$SANITIZER" ] && echo "$SANITIZER"
        return
    fi
    for c in "$(command -v compute-sanitizer 2>/dev/null)" \
        "${CUDA_HOME:-/usr/local/cuda}/bin/compute-sanitizer" \
        "${CUDA_HOME:-/usr/local/cuda}/compute-sanitizer/compute-sanitizer"; do
        [ -n "$c" ] && [ -x "$c" ] && { echo "$c"; return 0; }
    done
    return 1
}

# run_one PROGRAM TOOL: runs it, prints its line, leaves LOG and LOG.verdict.
run_one() {
    local prog=$1 tool=$2 name log start status verdict args
    name=$(basename "$prog")
    log="$logs/$name.$tool.log"
    args=$(arguments "$prog")
    local extra=()
    # stream-ordered races too: a buffer of cudaMallocAsync used on a stream
    # not ordered after its allocation, or after its cudaFreeAsync
    [ "$tool" = memcheck ] && extra=(--leak-check full --track-stream-ordered-races all)
    # NCCL's programs (lab13, lab14's part 3, sol13): NCCL probes its kernels for this GPU
    # (ncclInitKernelsForDevice), each probe failing with
    # cudaErrorNoKernelImageForDevice for the architectures it was not built
    # for, then clears the error; the tools list every one as a failed API
    # call (16 on an H200, none of them a memory error). Failed API calls go
    # unreported for these only: their own CUDA calls are all checked
    # (CUDA_CHECK ends the run on an error), and memory errors, leaks and
    # races still count.
    case $name in lab13 | lab14 | sol13) extra+=(--report-api-errors no) ;; esac
    start=$(date +%s%N)
    {
        echo "# $sanitizer --tool $tool ${extra[*]} $(program_path "$prog") $args"
        # shellcheck disable=SC2086 # $args is a list of words
        timeout -k 10 "${SANITIZE_TIMEOUT:-180}" "$sanitizer" --tool "$tool" "${extra[@]}" \
            --print-limit 100 "$(program_path "$prog")" $args
    } >"$log" 2>&1
    status=$?
    tenths=$((($(date +%s%N) - start) / 100000000))
    verdict=$(judge "$log" "$name" "$tool" "$status")
    echo "$verdict" >"$log.verdict"
    printf '%-12s %-10s %-5s %4d.%d s  %s\n' "$name" "$tool" "${verdict%%$'\t'*}" \
        $((tenths / 10)) $((tenths % 10)) "${verdict#*$'\t'}"
}

programs=("$@")
[ ${#programs[@]} -gt 0 ] || mapfile -t programs < <(make -s --no-print-directory list)
tools=${SANITIZE_TOOLS:-memcheck initcheck synccheck}
logs=${SANITIZE_LOGS:-build/sanitize}
jobs=${SANITIZE_JOBS:-$(($(nproc) / 2 < 4 ? ($(nproc) + 1) / 2 : 4))}

if ! sanitizer=$(find_sanitizer); then
    where="not found on PATH nor in ${CUDA_HOME:-/usr/local/cuda}/bin (set CUDA_HOME or SANITIZER)"
    [ -n "${SANITIZER:-}" ] && where="SANITIZER=$SANITIZER is not a program"
    echo "make sanitize needs compute-sanitizer, part of the CUDA toolkit: $where" >&2
    exit 3
fi
probe=${GPU_PROBE:-build/tests/gpu_probe}
if [ -x "$probe" ] && ! why=$("$probe" 2>&1); then
    echo "make sanitize needs a GPU: ${why#gpu_probe: cannot run here: }" >&2
    exit 3
fi
for prog in "${programs[@]}"; do
    [ -x "$(program_path "$prog")" ] || { echo "sanitize: no program $(program_path "$prog"): run make first" >&2; exit 2; }
done
mkdir -p "$logs"
rm -f "$logs"/*.verdict

echo "sanitize: ${#programs[@]} programs x $(wc -w <<<"$tools") tools, $jobs at a time, up to ${SANITIZE_TIMEOUT:-180} s each; logs in $logs/"
started=$(date +%s)
running=0
for prog in "${programs[@]}"; do
    for tool in $tools; do
        if [ "$running" -ge "$jobs" ]; then
            wait -n
            running=$((running - 1))
        fi
        run_one "$prog" "$tool" &
        running=$((running + 1))
    done
done
wait

clean=$(grep -l '^ok' "$logs"/*.verdict 2>/dev/null | wc -l)
skipped=$(grep -l '^skip' "$logs"/*.verdict 2>/dev/null | wc -l)
failed=$(grep -l '^FAIL' "$logs"/*.verdict 2>/dev/null | wc -l)
echo "sanitize: $clean clean, $failed failed, $skipped skipped in $(($(date +%s) - started)) s"
[ "$failed" -eq 0 ] || exit 1
[ "$clean" -gt 0 ] || exit 3 # every run skipped: nothing was checked
