# Loaded by every suite (load test_helper): bats-support and bats-assert,
# the repository's paths, and the GPU and no-GPU skips.
bats_require_minimum_version 1.5.0
bats_load_library bats-support
bats_load_library bats-assert

ROOT="$(cd "$BATS_TEST_DIRNAME/.." && pwd)"
TOOLS="$ROOT/build/tests"
cd "$ROOT" || exit 1

# Every program `make` builds, one a line.
programs() { make -s --no-print-directory list; }

# Skips the test, with the reason, unless a usable GPU is visible.
require_gpu() {
    local why
    why=$("$TOOLS/gpu_probe" 2>&1) || skip "no usable GPU here: ${why#gpu_probe: cannot run here: }"
}

# The GPUs this process sees: those CUDA_VISIBLE_DEVICES names, else those
# nvidia-smi lists (as the grader's workers.py counts them); the first one.
gpus() {
    if [ -n "${CUDA_VISIBLE_DEVICES:-}" ]; then
        tr ',' '\n' <<<"$CUDA_VISIBLE_DEVICES" | grep -c .
    else
        nvidia-smi -L 2>/dev/null | grep -c '^GPU'
    fi
}
first_gpu() { if [ -n "${CUDA_VISIBLE_DEVICES:-}" ]; then echo "${CUDA_VISIBLE_DEVICES%%,*}"; else echo 0; fi; }

# Skips the test unless 2 GPUs are visible (ex13, lab13, lab14's part 3).
require_two() { (($(gpus) >= 2)) || skip "needs 2 GPUs ($(gpus) visible)"; }

# Skips the test where a GPU is visible: the no-GPU path is tested elsewhere.
require_no_gpu() {
    if "$TOOLS/gpu_probe" >/dev/null 2>&1; then
        skip "a GPU is visible; the no-GPU path is tested on machines without one"
    fi
}

# require_recorded PATH...: skips where the instructor withheld a recorded
# fixture (tests/fixtures/PATH) from the students' copy: the recorded runs
# and traces hold the reference solutions' numbers and predictions
# (exercises/README.md, "Handing out the exercises").
require_recorded() {
    local p
    for p in "$@"; do
        [ -e "$ROOT/tests/fixtures/$p" ] || skip "tests/fixtures/$p withheld (exercises/README.md, \"Handing out the exercises\")"
    done
}

# Skips the test, with the reason, where the grader cannot make its sandbox
# (grader/sandbox.py: no bwrap, or no namespaces for it).
require_sandbox() {
    local why
    why=$(python3 -c 'import sys; sys.path.insert(0, "grader"); import sandbox; print(sandbox.check() or "")')
    [ -z "$why" ] || skip "no sandbox for the grader here: $why"
}

# report FILE...: the report checker (parses CSV and JSON; see its --help).
report() { python3 "$ROOT/tests/tools/report_check.py" "$@"; }

# one_arch: the grader's private build (and make's, given BUILD=) for one
# GPU architecture. Tests that only build, without a GPU, learn as much from
# one as from the portable five, in a fifth of the time (a grading run built
# the portable library and given programs in about a minute on CI's two cores).
# The grader's tools for it (the library, the given objects, the GPU probe:
# make grade-flags) are built once, in build/grade-sm_90, by the first test
# that asks (under a lock: suites may run at once), and every grading run
# after it starts its private build from a copy (STREAMLAB_GRADE_PREBUILT,
# grade.py), which its own make grade-flags then finds up to date. Where that
# build fails, the grader builds its own, as it would without this. A test
# that runs make itself after one_arch gives it a BUILD of its own: ARCH in
# build/ would rewrite its flags stamp, and the next make there would build
# everything again.
one_arch() {
    export ARCH=sm_90
    local prebuilt="$ROOT/build/grade-$ARCH"
    mkdir -p "$ROOT/build"
    if flock "$prebuilt.lock" make -s --no-print-directory -j"$(nproc)" BUILD="$prebuilt" \
        grade-flags >/dev/null 2>&1; then
        export STREAMLAB_GRADE_PREBUILT="$prebuilt"
    fi
}

# ok PYTHON-EXPRESSION MESSAGE: fails with MESSAGE unless the expression is true.
ok() { python3 -c "import sys; sys.exit(not ($1))" || fail "$2"; }

# within FILE VARIANT METRIC LOW HIGH: LOW <= the value <= HIGH (Python expressions).
within() {
    local v
    v=$(report value "$1" "$2" "$3") || fail "no $2 / $3 in $1"
    python3 -c "import sys; v = $v; sys.exit(not ($4 <= v <= $5))" ||
        fail "$2 $3 = $v, expected from $4 to $5"
}

# seconds COMMAND...: runs it (output and exit code discarded: only the time
# counts) and prints how long it took.
seconds() {
    local start end
    start=$(date +%s.%N)
    "$@" >/dev/null || true
    end=$(date +%s.%N)
    python3 -c "print($end - $start)"
}

# fastest_of_two PROGRAM [ARGS...]: the seconds of the faster of two runs.
fastest_of_two() {
    local first second
    first=$(seconds "$@")
    second=$(seconds "$@")
    python3 -c "print(min($first, $second))"
}

# within_budget LIMIT PROGRAM [ARGS...]: the program's own work takes under
# LIMIT seconds: its time beyond the start-up every CUDA program pays on this
# machine (a context, NVML, the machine probe at each end of a run: what
# machine_probe --probes 2 takes), each the faster of two runs. The start-up
# is the machine's, not the lab's: 0.3 s on one H100 machine, 0.9 s on a
# fresh one; and one run on a shared machine can be slowed by another tenant.
within_budget() {
    local limit=$1 floor took
    shift
    floor=$(fastest_of_two "$TOOLS/machine_probe" --probes 2)
    took=$(fastest_of_two "$@")
    ok "$took - $floor < $limit" \
        "$* took $took s, of which $floor s is the start-up every CUDA program pays here (budget: $limit s beyond it)"
}

# json_run PROGRAM ARGS...: runs it with --json, asserting exit 0; the report in $f.
json_run() {
    run --separate-stderr "$@" --json
    f="$BATS_TEST_TMPDIR/r.json"
    printf '%s\n' "$output" >"$f"
    assert_success
}

# grade_line PROGRAM ARGS...: runs it as the grader does (--grade, a token on
# stdin), asserting exit 0; its result line, the last on stdout, in $g: a
# JSON object of every metric (from_json reads it), level two's optima and
# model values included, which a student's run does not print.
grade_line() {
    run --separate-stderr bash -c 'echo tok | "$@" --grade' grade_line "$@"
    assert_success
    g="$BATS_TEST_TMPDIR/result.json"
    printf '%s\n' "${lines[${#lines[@]} - 1]}" >"$g"
}

# every_format STATUS PROGRAM ARGS...: runs it as a student does, in the text
# format, with --csv and with --json, each run exiting STATUS; $output then
# holds the three outputs, one after another (to refute what none may print).
every_format() {
    local status=$1 format all=""
    shift
    for format in "" --csv --json; do
        run -"$status" "$@" $format
        all+="$output"$'\n'
    done
    output=$all
}

# refute_row VARIANT METRIC: no row VARIANT METRIC in $output, as the text
# format, CSV or JSON prints one (every_format's three outputs).
refute_row() {
    local v m
    v=$(sed 's/[][\.*^$()+?{}|]/\\&/g' <<<"$1")
    m=$(sed 's/[][\.*^$()+?{}|]/\\&/g' <<<"$2")
    refute_output --regexp "$v( +|,|\",\"metric\":\")$m( |,|\"|$)"
}

# from_json FILE EXPRESSION: prints a Python expression of the JSON report `d`.
from_json() { python3 -c "import json; d = json.load(open('$1')); print($2)"; }

# attempts_told FILE.json WHAT: the comparison WHAT took 1 to 3 attempts (1 +
# --retries' default 2); one measured more than once names what it saw
# (a lab re-measures only when the machine shows interference).
attempts_told() {
    local n
    n=$(report value "$1" "$2" attempts) || fail "no attempts row for $2 in $1"
    ok "1 <= $n <= 3" "$2 measured $n times"
    ((n == 1)) || ok "$(from_json "$1" "any(e['what'] == '$2' and e['seen'] for e in d['interference'])")" \
        "$2 measured $n times without naming the interference"
}

# observed FILE.json NAME: the verdict NAME was judged and observed.
observed() {
    ok "$(from_json "$1" "[v['observed'] for v in d['verdict']['items'] if v['name'] == '$2'] == [True]")" \
        "$2 not observed: $(from_json "$1" "d['verdict']")"
}

# withheld FILE.json LIST VARIANT [METRIC]: the report's LIST (predictions,
# or measurements) has no row of VARIANT (and METRIC): a model's value that
# a student's run keeps back (grading_predicted() in exercises/given/grading.h).
withheld() {
    python3 - "$@" <<'PY' || fail "$3 ${4:-} is in the $2 of $1"
import json, sys
d = json.load(open(sys.argv[1]))
rows = [m for m in d[sys.argv[2]] if m["variant"] == sys.argv[3]
        and (len(sys.argv) < 5 or m["metric"] == sys.argv[4])]
print(rows or "", end="")
sys.exit(1 if rows else 0)
PY
}
