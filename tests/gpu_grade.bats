#!/usr/bin/env bats
# The grader on a real GPU: the reference solutions score full marks, the
# exercises as handed out score nothing for any concept, each broken
# submission in tests/fixtures/submissions/ (fake output, over-synchronised,
# racy, hanging, out of bounds, a build error) is caught with its reason, and
# a program takes the grader's token from stdin.
# One grading run of all of them (setup_file, without compute-sanitizer, about
# a minute and a half on an H100) serves most tests; the last one grades the
# solutions under compute-sanitizer memcheck where it is installed. ex13 needs
# two GPUs in one process: on one GPU it is waived for everyone, in no total;
# on two or more, that run grades it on a worker holding two GPUs.

load test_helper
load check_sizes

ALL="$BATS_FILE_TMPDIR/all"

setup_file() {
    "$TOOLS/gpu_probe" >/dev/null 2>&1 || return 0 # each test skips, with the reason
    local class="$BATS_FILE_TMPDIR/class" d
    mkdir -p "$class"
    [ -d "$ROOT/solutions" ] && ln -s "$ROOT/solutions" "$class/solutions"
    ln -s "$ROOT/exercises" "$class/exercises"
    for d in "$ROOT"/tests/fixtures/submissions/*/; do
        [ -d "$d" ] && ln -s "$d" "$class/$(basename "$d")"
    done
    python3 grader/grade.py --submissions "$class" --no-memcheck --format gradescope \
        --out "$ALL" >"$ALL.txt" 2>&1
    echo $? >"$ALL.rc"
}

setup() { require_gpu; }

# need solutions|fixtures: skips the test when the instructor withheld that folder.
need() {
    case "$1" in
    solutions) [ -d solutions ] || skip "solutions/ withheld" ;;
    fixtures) [ -d tests/fixtures/submissions ] || skip "tests/fixtures/submissions/ withheld" ;;
    esac
}

# row STUDENT EXERCISE: that row of grades.csv as points/max,status,reason.
row() {
    python3 - "$ALL/grades.csv" "$1" "$2" <<'PY'
import csv, sys
for r in csv.DictReader(open(sys.argv[1])):
    if (r["student"], r["exercise"]) == (sys.argv[2], sys.argv[3]):
        print(f"{r['points']}/{r['max_points']},{r['status']},{r['reason']}")
PY
}

# metric STUDENT EXERCISE NAME: a measurement the program printed, as recorded.
metric() {
    python3 -c "import json, sys; print(json.load(open(sys.argv[1]))['measure']['metrics'][sys.argv[2]])" \
        "$ALL/$1/outcomes/$2.json" "$3"
}

# judged STUDENT EXERCISE NAME: the measurement as the grader judged it: the
# first run's, or where a near miss was measured again (grade.py's
# measure_again), the median of the runs made again, which decided.
judged() {
    python3 - "$ALL/$1/outcomes/$2.json" "$3" <<'PY'
import json, sys
sys.path.insert(0, "grader")
import rubric
outcome, name = json.load(open(sys.argv[1])), sys.argv[2]
again = rubric.again_value({"metric": name}, outcome.get("pairs") or [])
print(outcome["measure"]["metrics"][name] if again is None else again)
PY
}

@test "the grading run finished, and its CSV, JUnit and Gradescope outputs validate" {
    need solutions
    need fixtures
    [ "$(cat "$ALL.rc")" = 0 ] || fail "grade.py exited $(cat "$ALL.rc"): $(tail -5 "$ALL.txt")"
    run python3 tests/fixtures/grading/check_outputs.py junit "$ALL/junit.xml"
    assert_success
    # ex13's six criteria (three of level one, three of level two) count where
    # it was graded (2 GPUs), not where waived
    assert_line "solutions: $(($(gpus) >= 2 ? 80 : 74)) tests, 0 failures"
    for s in solutions exercises fake-output over-synchronised racy hanging out-of-bounds build-error level1-only; do
        python3 tests/fixtures/grading/check_outputs.py gradescope "$ALL/$s/results.json" >/dev/null ||
            fail "$s/results.json is not valid"
    done
    run python3 -c "import csv; print(len(list(csv.DictReader(open('$ALL/grades.csv')))))"
    assert_output "126" # 9 students x 14 exercises: ex13 has its row when waived too
}

@test "each submission scores what its design predicts" {
    need solutions
    need fixtures
    local wrong=""  # every row off its design, not only the first: a miss is traced from all
    while read -r student ex expected; do
        run row "$student" "$ex"
        [[ "$output" == "$expected,"* ]] || wrong+="$student $ex: $output (expected $expected)"$'\n'
    done <<'EOF'
solutions ex01 16/16,passed
solutions ex02 16/16,passed
solutions ex03 16/16,passed
solutions ex04 16/16,passed
solutions ex05 16/16,passed
solutions ex06 16/16,passed
solutions ex07 16/16,passed
solutions ex08 16/16,passed
solutions ex09 16/16,passed
solutions ex10 16/16,passed
solutions ex11 16/16,passed
solutions ex12 16/16,passed
solutions ex14 16/16,passed
exercises ex01 4/16,partial
exercises ex02 4/16,partial
exercises ex03 4/16,partial
exercises ex04 5/16,partial
exercises ex05 4/16,partial
exercises ex06 1/16,partial
exercises ex07 5/16,partial
exercises ex08 6/16,partial
exercises ex09 4/16,partial
exercises ex10 3/16,partial
exercises ex11 6/16,partial
exercises ex12 5/16,partial
exercises ex14 4/16,partial
fake-output ex03 4/16,partial
fake-output ex04 5/16,partial
over-synchronised ex02 12/16,partial
over-synchronised ex04 5/16,partial
over-synchronised ex06 8/16,partial
racy ex06 1/16,partial
hanging ex06 0/16,timed_out
build-error ex01 0/16,build_error
level1-only ex01 12/16,partial
level1-only ex03 12/16,partial
level1-only ex04 12/16,partial
level1-only ex06 10/16,partial
level1-only ex05 12/16,partial
level1-only ex07 12/16,partial
level1-only ex14 12/16,partial
level1-only ex08 12/16,partial
level1-only ex12 12/16,partial
level1-only ex10 12/16,partial
level1-only ex09 12/16,partial
level1-only ex11 12/16,partial
level1-only ex02 12/16,partial
EOF
    [ -z "$wrong" ] || fail "$wrong"
    # ex13 needs two GPUs in one process: on one GPU it is waived for everyone,
    # in no total (on two, the next test)
    (($(gpus) < 2)) || return 0
    for student in solutions exercises fake-output build-error; do
        run row "$student" ex13
        [[ "$output" == "0/0,waived,needs 2 GPUs in one process, and this worker has 1:"* ]] ||
            fail "$student ex13: $output"
    done
}

@test "on two GPUs grade-all grades ex13 on a worker holding two: the solution 16/16, the exercise as given 6/16" {
    require_two
    need solutions
    run row solutions ex13
    assert_output "16/16,passed,full marks [memcheck off]"
    run metric solutions ex13 level2_of_best
    python3 -c "import sys; sys.exit(not $output >= 0.9)" || fail "sol13's level two $output of the best"
    run metric solutions ex13 level2_wrong
    assert_output "0"
    run metric solutions ex13 level2_model_gap
    python3 -c "import sys; sys.exit(not $output <= 0.01)" || fail "sol13's m $output above the model's best"
    run metric solutions ex13 level2_prediction_off
    python3 -c "import sys; sys.exit(not $output <= 0.02)" || fail "sol13's predicted time $output off the model's"
    run metric solutions ex13 level2_model_off
    assert_output "0"
    # as given: right, each layer and bucket queued once (4 points), and
    # serial; level two right at one layer a bucket (2 points), 20% or more
    # slower than the best size by the model, not the model's m, and a
    # predicted time of 0
    run row exercises ex13
    assert_output --partial "6/16,partial,overlaps: speedup"
    run row build-error ex13
    assert_output "0/16,missing,no ex13_*.cu in the submission"
    # graded after the others, on a worker of its own holding two GPUs and
    # their two device nodes, against the reference it measured there
    run python3 - "$ALL" <<'PY'
import json, pathlib, sys
out = pathlib.Path(sys.argv[1])
for path in sorted(out.glob("*/outcomes/ex13.json")) + sorted(out.glob("_reference/*/outcomes/ex13.json")):
    o = json.loads(path.read_text())
    if o.get("measure"):
        print(path.relative_to(out).parts[0], o["worker"], len(o["gpu"].split(",")),
              len(str(o["gpu_node"]).split(",")), o["measure"]["metrics"]["gpus"])
PY
    assert_success
    assert_output --regexp "^exercises ([0-9]+) 2 2 2
(level1-only \1 2 2 2
)?solutions \1 2 2 2
_reference \1 2 2 2$"
    run grep -c "  ex13  .*  \[worker [0-9]*, GPUs [^],]*,[^],]*\]$" "$ALL/report.txt"
    assert_output "9"
}

@test "the GPU is usable from inside the sandbox, and every run of the grading was sandboxed" {
    run python3 - <<'PY'
import sys, tempfile
sys.path.insert(0, "grader")
import sandbox
with tempfile.TemporaryDirectory() as folder:
    done = sandbox.run(sandbox.Sandbox(readonly=["build/tests"]), ["build/tests/gpu_probe"], 60,
                       f"{folder}/scratch")
print(done.returncode, done.stdout.strip(), done.stderr.strip()[-300:])
PY
    assert_output --regexp "^0 [^ ]"
    run grep -L '"sandbox": "bubblewrap' "$ALL"/*/outcomes/*.json
    assert_output ""
}

@test "each worker grades in a sandbox holding its own GPUs' device nodes, and no other GPU's" {
    [ -n "${CUDA_VISIBLE_DEVICES:-}" ] || command -v nvidia-smi >/dev/null ||
        skip "no nvidia-smi and no CUDA_VISIBLE_DEVICES: one worker, with the GPUs as the grader has them"
    run grep "holds every GPU's node" "$ALL.txt"
    assert_failure # the grader says so when a worker's sandbox needed every node
    run python3 - "$ALL" <<'PY'
import json, pathlib, sys
nodes = {}   # the worker's GPU: the device nodes its sandboxes held
for path in pathlib.Path(sys.argv[1]).glob("**/outcomes/*.json"):
    outcome = json.loads(path.read_text())
    if outcome.get("measure"):
        nodes.setdefault(outcome["gpu"], set()).add(str(outcome.get("gpu_node")))
print(sorted((gpu, sorted(held)) for gpu, held in nodes.items()))
# a node per GPU: one for a worker of one, two for ex13's worker of two
assert all(len(node.split(",")) == len(gpu.split(",")) for gpu, held in nodes.items()
           for node in held), nodes
PY
    assert_success
    assert_output --regexp "/dev/nvidia[0-9]+"
    refute_output --partial "None"
}

@test "the reference solutions reach every target by the programs' own measurements" {
    need solutions
    # as the grader judged them: a near miss measured again counts as its median
    # (on a fresh H100, 2026-11-24, ex04's level two read 0.885 first, then
    # 1.02-1.10 three times: full marks, as designed)
    run judged solutions ex01 speedup_vs_blocking
    python3 -c "import sys; sys.exit(not $output >= 1.8)" || fail "ex01 speedup $output"
    run judged solutions ex04 efficiency
    python3 -c "import sys; sys.exit(not $output >= 0.85)" || fail "ex04 efficiency $output"
    run judged solutions ex03 level2_median_error_pct
    python3 -c "import sys; sys.exit(not $output <= 2)" || fail "ex03 level-2 median error $output%"
    run judged solutions ex03 level2_idle_launches
    assert_output "0"
    run judged solutions ex02 level2_efficiency
    python3 -c "import sys; sys.exit(not $output >= 0.9)" || fail "ex02 level-2 efficiency $output"
    run judged solutions ex02 level2_runs_wrong
    assert_output "0"
    run judged solutions ex04 level2_efficiency
    python3 -c "import sys; sys.exit(not $output >= 0.9)" || fail "ex04 level-2 efficiency $output"
    run judged solutions ex05 latency_ratio
    python3 -c "import sys; sys.exit(not $output >= 5)" || fail "ex05 latency ratio $output"
    run judged solutions ex05 level2_wait_p90_us
    python3 -c "import sys; sys.exit(not $output <= 200)" || fail "ex05 level-2 wait (p90) $output us"
    run judged solutions ex05 level2_runs_wrong
    assert_output "0"
    run judged solutions ex07 efficiency
    python3 -c "import sys; sys.exit(not $output >= 0.8)" || fail "ex07 efficiency $output"
    run judged solutions ex07 level2_efficiency
    python3 -c "import sys; sys.exit(not $output >= 0.8)" || fail "ex07 level-2 efficiency $output"
    run judged solutions ex08 level2_efficiency
    python3 -c "import sys; sys.exit(not $output >= 0.9)" || fail "ex08 level-2 efficiency $output"
    run judged solutions ex08 level2_runs_wrong
    assert_output "0"
    run judged solutions ex12 level2_host_ratio
    python3 -c "import sys; sys.exit(not $output <= 0.25)" || fail "ex12 level-2 host ratio $output"
    run judged solutions ex12 level2_mismatches
    assert_output "0"
    run judged solutions ex10 level2_cost_over_unlimited
    python3 -c "import sys; sys.exit(not $output <= 1.5)" || fail "ex10 level-2 cost $output"
    run judged solutions ex10 level2_threshold_error_pct
    python3 -c "import sys; sys.exit(not $output <= 25)" || fail "ex10 level-2 threshold off by $output%"
    run judged solutions ex09 level2_idle_fraction
    python3 -c "import sys; sys.exit(not $output <= 0.05)" || fail "ex09 level-2 idle fraction $output"
    run judged solutions ex09 level2_results_wrong
    assert_output "0"
    run judged solutions ex06 producer_idle_runs
    assert_output "0"
    run judged solutions ex06 level2_producer_idle_runs
    assert_output "0"
    run judged solutions ex06 level2_runs_overwritten
    assert_output "0"
    run judged solutions ex11 level2_busy_over_target
    python3 -c "import sys; sys.exit(not $output >= 0.9)" || fail "ex11 level-2 busy over best $output"
    run judged solutions ex11 level2_size_off
    assert_output "0"
    run judged solutions ex11 level2_wrong
    assert_output "0"
    run judged solutions ex14 sms_off_partition
    assert_output "0"
    run judged solutions ex14 level2_latency_over_budget
    python3 -c "import sys; sys.exit(not $output <= 1)" || fail "ex14 level-2 latency over budget $output"
    run grep -c "^note: the reference solution scored" "$ALL.txt"
    assert_output "0"
}

@test "under --grade a program takes its token from stdin and prints it once, in its last line" {
    need solutions
    run --separate-stderr sh -c 'echo 0123abcd | ./sol01 --grade --check'
    assert_success
    last=$(printf '%s\n' "$output" | tail -1)
    [[ "$last" == '{"exercise": "ex01", "pass": "check", "nonce": "0123abcd", '* ]] || fail "last line: $last"
    [ "$(printf '%s\n' "$output" | grep -c 0123abcd)" = 1 ] || fail "the token was printed more than once"
    run --separate-stderr sh -c './sol01 --grade --check </dev/null | tail -1'
    assert_output --partial '"nonce": ""'
}

@test "each exercise's check pass prints the sizes it runs in its settings line" {
    # tests/check_sizes.bash: what each opening comment says; the settings line
    # is printed from the options after check_pass_sizes() set them
    local ex words settings line failures=""
    while IFS='|' read -r ex words settings; do
        [ -n "$ex" ] || continue
        line=$("./$ex" --check 2>/dev/null | grep -m1 '^settings:')
        [ -n "$line" ] || { failures+=$'\n'"$ex --check printed no settings line"; continue; }
        [[ "$line " == *" --check "* ]] || failures+=$'\n'"$ex --check: $line: no --check"
        set -- $settings
        while [ $# -ge 2 ]; do
            [[ "$line " == *" $1 $2 "* ]] || failures+=$'\n'"$ex --check: $line: not $1 $2"
            shift 2
        done
    done <<<"$CHECK_SIZES"
    [ -z "$failures" ] || fail "the check pass's settings lines:$failures"
}

@test "the exercises as handed out score nothing for any concept criterion" {
    run python3 tests/fixtures/grading/check_outputs.py gradescope "$ALL/exercises/results.json"
    assert_success
    # thirteen exercises: their correctness points (2+2+2+3+2+1+3+4+2, ex10 1, ex11 4,
    # ex12 3, ex14 2, and every level two's correctness 2 (ex06's, racing both ways, 0))
    # of 208 (a level two of 6 in every exercise), and 0 for any concept
    # criterion; ex13 waived on one GPU, in no total, and on two its correctness
    # 4 + 2 of 16
    if (($(gpus) >= 2)); then
        assert_output "61/224 0"
    else
        assert_output "55/208 0"
    fi
}

@test "a level-one-only submission keeps level one's points and earns no level-two concept point" {
    need fixtures
    # ex01: level one's 10 and level two's correctness 2; each worker on its
    # per-thread default stream, which the legacy-stream call orders: the sum
    run row level1-only ex01
    assert_output --partial "12/16,partial,level2_workers_overlap: level2_speedup_vs_per_thread"
    run grep "^level1-only,ex01," "$ALL/grades.csv"
    assert_output --regexp ",2,6$"
    run metric level1-only ex01 speedup_vs_blocking
    python3 -c "import sys; sys.exit(not $output >= 1.8)" || fail "level one's speedup $output"
    # ex02: level one's 10 and level two's correctness 2; produce, queue, wait
    # for the stream, consume: right, and each stage waits for the others
    run row level1-only ex02
    assert_output --partial "12/16,partial,level2_efficient: level2_efficiency"
    run grep "^level1-only,ex02," "$ALL/grades.csv"
    assert_output --regexp ",2,6$"
    run metric level1-only ex02 overlap
    python3 -c "import sys; sys.exit(not $output >= 0.5)" || fail "level one's overlap $output"
    # ex03: level one's 10 and level two's correctness 2 (one background, one
    # launch, nothing timed), none of its concept's 4
    run row level1-only ex03
    assert_output --partial "12/16,partial,level2_median_accurate: level2_median_error_pct 100"
    run grep "^level1-only,ex03," "$ALL/grades.csv"
    assert_output --regexp ",2,6$"
    # ex04: level two a double buffer (two streams, whole batches), held at
    # its streams' bound, short of 90% (how short is the exercise's
    # prediction)
    run row level1-only ex04
    echo "# level1-only ex04: level2_efficiency $(metric level1-only ex04 level2_efficiency)," \
        "its kernel at $(metric level1-only ex04 level2_kernel_ratio) h," \
        "$(metric level1-only ex04 level2_rounds_counted) of" \
        "$(metric level1-only ex04 level2_rounds) rounds counted," \
        "$(metric level1-only ex04 level2_attempts) attempt(s)" >&3
    assert_output --partial "12/16,partial,level2_efficient: level2_efficiency"
    run metric level1-only ex04 level2_streams
    assert_output "2"
    # 12 of 16: level one's 10 and level two's correctness 2, none of its concept's 4
    run grep "^level1-only,ex04," "$ALL/grades.csv"
    assert_output --regexp ",2,6$"
    run metric level1-only ex04 efficiency
    python3 -c "import sys; sys.exit(not $output >= 0.85)" || fail "level one's efficiency $output"
    # ex06: level one's 10; level two as handed out races both ways, so not
    # even its correctness points
    run row level1-only ex06
    assert_output --partial "10/16,partial,level2_results_correct: level2_runs_wrong"
    run grep "^level1-only,ex06," "$ALL/grades.csv"
    assert_output --regexp ",0,6$"
    # ex07: level one's 10 and level two's correctness 2: its steps in one
    # stream, in order, are right and as slow as the program's own stream
    run row level1-only ex07
    assert_output --partial "12/16,partial,level2_pool_reaches_model: level2_efficiency"
    run grep "^level1-only,ex07," "$ALL/grades.csv"
    assert_output --regexp ",2,6$"
    run metric level1-only ex07 efficiency
    python3 -c "import sys; sys.exit(not $output >= 0.8)" || fail "level one's efficiency $output"
    # ex14: level one's 10 and level two's correctness 2; the device's least
    # partition misses the budget and is priced below the cheapest that meets it
    run row level1-only ex14
    assert_output --partial "12/16,partial,level2_within_budget: level2_latency_over_budget"
    run grep "^level1-only,ex14," "$ALL/grades.csv"
    assert_output --regexp ",2,6$"
    # ex05: level one's 10 and level two's correctness 2 (its shape, one block
    # per slot, keeps the contract); behind it the kernel waits for the rest
    # of the background, whatever its priority
    run row level1-only ex05
    assert_output --partial "12/16,partial,level2_within_budget: level2_wait_p90_us"
    run grep "^level1-only,ex05," "$ALL/grades.csv"
    assert_output --regexp ",2,6$"
    run metric level1-only ex05 latency_ratio
    python3 -c "import sys; sys.exit(not $output >= 5)" || fail "level one's latency ratio $output"
    # ex08: level one's 10 and level two's correctness 2: host-chained, right
    # and as slow as the program's own host-chained run
    run row level1-only ex08
    assert_output --partial "12/16,partial,level2_fork_join: level2_efficiency"
    run grep "^level1-only,ex08," "$ALL/grades.csv"
    assert_output --regexp ",2,6$"
    run metric level1-only ex08 efficiency
    python3 -c "import sys; sys.exit(not $output >= 0.85)" || fail "level one's efficiency $output"
    # ex12: level one's 10 and level two's correctness 2: every step issued
    # from the streams with its own k, right and no faster than the program's,
    # well under the gated streams' step (level2_graph_efficiency 0.45-0.75
    # by the model, the bar 1.0)
    run row level1-only ex12
    assert_output --partial "12/16,partial,level2_faster_per_step: level2_graph_efficiency"
    run grep "^level1-only,ex12," "$ALL/grades.csv"
    assert_output --regexp ",2,6$"
    run metric level1-only ex12 speedup
    python3 -c "import sys; sys.exit(not $output >= 1.3)" || fail "level one's speedup $output"
    # ex10: level one's 10 and level two's correctness 2: its pool at
    # threshold 0 serves the loop right, and remaps it at every synchronise
    run row level1-only ex10
    assert_output --partial "12/16,partial,level2_keeps_working_set: level2_cost_over_unlimited"
    run grep "^level1-only,ex10," "$ALL/grades.csv"
    assert_output --regexp ",2,6$"
    run metric level1-only ex10 level2_threshold_error_pct
    assert_output "100"
    # ex09: level one's 10 and level two's correctness 2: the loss of the step
    # just issued, read back at once, is right, and the GPU idles through the
    # host's stalls
    run row level1-only ex09
    assert_output --partial "12/16,partial,level2_gpu_never_idle: level2_idle_fraction"
    run grep "^level1-only,ex09," "$ALL/grades.csv"
    assert_output --regexp ",2,6$"
    run metric level1-only ex09 host_wait_fraction
    python3 -c "import sys; sys.exit(not $output <= 0.2)" || fail "level one's host wait $output"
    # ex11: level one's 10 and level two's correctness 2: one producer and two
    # slots are right, the GPU busy under half the best, and not the model's size
    run row level1-only ex11
    assert_output --partial "12/16,partial,level2_gpu_busy: level2_busy_over_target"
    run grep "^level1-only,ex11," "$ALL/grades.csv"
    assert_output --regexp ",2,6$"
    run metric level1-only ex11 efficiency
    python3 -c "import sys; sys.exit(not $output >= 0.85)" || fail "level one's efficiency $output"
    run metric level1-only ex11 level2_size_off
    python3 -c "import sys; sys.exit(not $output >= 2)" || fail "level two's size off by $output"
    # ex13 (two GPUs only; waived on one): level one's 10 and level two's
    # correctness 2: one layer a bucket is right, 20% or more slower than the
    # best size by the model, more than 1% off the model's m, and its
    # predicted time 0, 100% off the model's
    (($(gpus) >= 2)) || return 0
    run row level1-only ex13
    assert_output --partial "12/16,partial,level2_bucket_size: level2_of_best"
    run grep "^level1-only,ex13," "$ALL/grades.csv"
    assert_output --regexp ",2,6$"
    run metric level1-only ex13 speedup
    python3 -c "import sys; sys.exit(not $output >= 1.2)" || fail "level one's speedup $output"
    run metric level1-only ex13 level2_m
    assert_output "1"
    run metric level1-only ex13 level2_model_gap
    python3 -c "import sys; sys.exit(not $output > 0.01)" || fail "one layer a bucket $output from the model's best"
    run metric level1-only ex13 level2_prediction_off
    assert_output "1"
    run metric level1-only ex13 level2_model_off
    assert_output "1"
}

@test "printed output is never read: ex03's constant misses two random durations, ex04's verdict earns nothing" {
    need fixtures
    run row fake-output ex03
    assert_output --partial "median_accurate: median_error_pct"
    assert_output --partial "warm_up: warmup_launches 0, needs >= 1"
    assert_output --partial "level2_median_accurate: level2_median_error_pct 100"
    run row fake-output ex04
    assert_output --partial "overlaps: speedup"
    run metric fake-output ex04 buffer_sets
    assert_output "1"
}

@test "over-synchronised work is correct but earns nothing for the concept" {
    need fixtures
    # ex02's level two produces ahead but queues after the consume: the GPU waits
    run row over-synchronised ex02
    assert_output --partial "level2_efficient: level2_efficiency"
    assert_output --partial "needs >= 0.9"
    run row over-synchronised ex04
    assert_output --partial "overlaps: speedup"
    assert_output --partial "needs >= 1.3"
    run row over-synchronised ex06
    assert_output --partial "host_never_blocks: issue_fraction"
    assert_output --partial "gpu_waits: producer_idle_runs 20, needs <= 0"
    # level two waits on the host for each slot: safe, and the host blocked
    assert_output --partial "level2_gpu_waits: level2_producer_idle_runs 20, needs <= 0"
    run metric over-synchronised ex06 level2_runs_overwritten
    assert_output "0"
}

@test "the race left in shows as wrong results in every timed run, and no concept points" {
    need fixtures
    run row racy ex06
    assert_output --partial "results_correct: mismatches"
    assert_output --partial "the concept criteria were not scored"
    # 20 timed runs and a warm-up, whose results count too; the warm-up's
    # first launches load the kernels, which can delay stage 2 long enough to
    # hide the race once (on the H200: 20 of 21).
    run metric racy ex06 runs_wrong
    assert_success
    (( output >= 20 )) || fail "the race showed in only $output of 21 runs"
    # its level two waits for each write, never for a read: every run with a
    # slow consumer overwrites a slot before it was read
    slow=$(metric racy ex06 level2_slow_consumer_runs)
    run metric racy ex06 level2_runs_overwritten
    (( slow >= 5 && output >= slow )) || fail "overwritten in $output runs, $slow with a slow consumer"
}

@test "a submission that never returns is stopped at the rubric's time limit" {
    need fixtures
    run row hanging ex06
    assert_output "0/16,timed_out,timed out after 20 s"
}

@test "a write past the end of a submission's own buffer leaves the program's buffers intact, for memcheck to find" {
    need fixtures
    # ex06 hands the submission no buffer of the program's: their guard zones
    # stay intact, and only compute-sanitizer (off in this run; the last test)
    # sees the write past the submission's own scratch buffer
    run metric out-of-bounds ex06 guard_words_changed
    assert_output "0"
    run row out-of-bounds ex06
    assert_output "16/16,passed,full marks [memcheck off]"
}

@test "under compute-sanitizer the solutions keep full marks in under 2 minutes, and memcheck names the write past a buffer" {
    sanitizer=$(python3 -c 'import sys; sys.path.insert(0, "grader"); import runner
print(runner.find_sanitizer({"NVCC": "nvcc"}) or "")')
    [ -n "$sanitizer" ] || skip "compute-sanitizer is not installed: memcheck is not available"
    need solutions
    need fixtures
    start=$(date +%s)
    run make -s grade SUBMISSION=solutions GRADE_OUT="$BATS_TEST_TMPDIR/sol"
    assert_success
    seconds=$(($(date +%s) - start))
    ((seconds < 120)) || fail "grading the thirteen solutions took $seconds s"
    # every exercise, ex13 only where two GPUs are visible (in one process: on one, waived)
    want=$(($(gpus) >= 2 ? 14 : 13))
    run grep -c "passed,full marks \[checked under compute-sanitizer memcheck\]" "$BATS_TEST_TMPDIR/sol/grades.csv"
    # short of it: name the rows that were not, so that a miss can be traced
    [ "$output" = "$want" ] || fail "$output of $want at full marks under memcheck; the others: $(
        grep -v "passed,full marks \[checked under compute-sanitizer memcheck\]" \
            "$BATS_TEST_TMPDIR/sol/grades.csv" | grep -v ',waived,' | tail -n +2 | cut -c1-300)"
    python3 grader/grade.py --submission tests/fixtures/submissions/out-of-bounds --only ex06 \
        --no-reference --out "$BATS_TEST_TMPDIR/oob" >/dev/null 2>&1
    run cat "$BATS_TEST_TMPDIR/oob/grades.csv"
    assert_output --partial "out-of-bounds,ex06,0,16,"
    assert_output --partial "compute-sanitizer memcheck found"
}
