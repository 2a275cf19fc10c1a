#!/usr/bin/env bats
# lab04 on a real GPU: a three-stage batch pipeline (H2D, kernel, D2H) reaches
# 85% of its ideal speedup with enough streams; the double buffer's two
# streams are held to the streams' bound (about 2x on a balanced load);
# pageable memory loses the overlap; across kernel ratios the speedup peaks
# where the kernel takes as long as the upload; ex04 as given does not
# overlap, its solution does, and each shows the points the grader would
# give. The verdict is asserted on one run: the lab times every variant in
# rounds with the serial run, and where another process spoils them it
# measures again itself (--retries) and says why.

load test_helper
load repeat

setup() { require_gpu; }

# predicted FILE VARIANT METRIC: the model's value for a measurement in a JSON report.
predicted() {
    python3 -c "import json; d = json.load(open('$1'))
print([p['value'] for p in d['predictions'] if p['variant'] == '$2' and p['metric'] == '$3'][0])"
}

# pageable_copies FILE: n(h+d) with each pageable copy at the p5 of its
# samples: the copies alone, one after another.
pageable_copies() {
    python3 -c "import json; d = json.load(open('$1'))
m = {x['variant']: x for x in d['measurements'] if x['metric'] == 'time'}
n = d['parameters']['batches']['value']
print(n * (m['pageable H2D']['stats']['p5'] + m['pageable D2H']['stats']['p5']))"
}

# The effect is asserted at the default size the lab is designed for: --quick's
# 1-2 MiB chunks and two samples missed the bar once in four H100 runs, while
# the default run reached 94-96% every time. --quick is held to correctness.
@test "lab04 verifies every output, reaches 85% of the ideal speedup and accounts for its attempts" {
    run --separate-stderr ./lab04 --json
    printf '%s\n' "$output" >"$BATS_TEST_TMPDIR/r.json"
    assert_success
    ok "$(from_json "$BATS_TEST_TMPDIR/r.json" \
        "[c['passed'] for c in d['checks'] if c['name'] == 'outputs_verified'] == [True]")" \
        "outputs_verified failed or is missing"
    observed "$BATS_TEST_TMPDIR/r.json" pipeline_reaches_ideal
    attempts_told "$BATS_TEST_TMPDIR/r.json" "pipeline vs serial"
}

@test "lab04 --quick verifies every output and exits 0 or, with the reason, 4" {
    run ./lab04 --quick
    [ "$status" -eq 0 ] || { [ "$status" -eq 4 ] && [[ "$output" == *"likely reason for "* ]]; } ||
        fail "exit $status"
    assert_output --partial "[ok]   outputs_verified"
}

@test "lab04, ex04 and sol04 --quick each do their work in under one second" {
    for p in $(programs | grep -xE 'lab04|ex04|sol04'); do
        within_budget 1.0 "./$p" --quick
    done
}

@test "the default run verifies every variant and prints each one's speedup and efficiency" {
    ./lab04 --json >"$BATS_TEST_TMPDIR/r.json" || [ $? -eq 4 ] # the first test judges the verdict
    f="$BATS_TEST_TMPDIR/r.json"
    run report json "$f"
    assert_success
    for v in "double buffered" "2 streams depth" "2 streams breadth" "3 streams depth" \
        "3 streams breadth" "4 streams depth" "4 streams breadth" "8 streams depth" \
        "8 streams breadth"; do
        report value "$f" "$v" speedup >/dev/null || fail "no speedup for $v"
        report value "$f" "$v" efficiency >/dev/null || fail "no efficiency for $v"
    done
    run report get "$f" checks.0.passed
    assert_output "true"
}

# Each round's serial run over n(h+k+d) of that round's own stages, the
# median round: one run, since a burst of another process's traffic spoils
# a round, not the median (on an H100 on 2026-11-24 the medians of the
# serial runs and of the stages, compared, read 12.6% apart in one of three
# runs; ex04's rounds read their serial run within 10% of their stages in
# 135 of 150 quiet rounds, docs/results/h100-grading/README.md).
@test "the serial run takes the sum of its stages, within 10%, round by round" {
    # the stage model is asked of, not the verdict: exit 4 is allowed here
    ./lab04 --quick --json >"$BATS_TEST_TMPDIR/r.json" || [ $? -eq 4 ]
    fit=$(report value "$BATS_TEST_TMPDIR/r.json" serial time_over_model)
    ok "0.9 <= $fit <= 1.1" "the serial run $fit x n(h+k+d), the median round's"
}

# One run: every speedup is the median of its rounds' serial / variant, the
# serial run timed in the same rounds, so one burst cannot favour one variant.
# Three or more streams go past the two streams' bound: asserted through the
# lab's own verdict, which re-measures where another process spoils a round
# (#13), and names its best variant. Before, this compared the best 3-4
# stream speedup with 1.25x the double buffer's from one unretried run, and
# failed once on the H100 at 1.24x (2026-11-23: 2.23x against 1.80x, the
# model's 2.88x against 1.92x).
@test "two streams are held to the streams' bound; three or more go past it" {
    json_run ./lab04
    # each stream runs its batches' three stages in turn: the model (about 2x
    # on a balanced load), within 15%
    measured=$(report value "$f" "double buffered" time)
    model=$(predicted "$f" "double buffered" time)
    ok "0.85 * $model <= $measured <= 1.15 * $model" "double buffered $measured ms, model $model ms"
    # the verdict's best variant, at 85% or more of its ideal, has 3 or more
    # streams: two are held to their bound, 85% of the ideal is past it
    observed "$f" pipeline_reaches_ideal
    best=$(from_json "$f" "[v['detail'] for v in d['verdict']['items'] if v['name'] == 'pipeline_reaches_ideal'][0]")
    [[ "$best" =~ ^best:\ ([348])\ streams ]] || fail "the best variant has two streams: $best"
}

@test "from pageable memory the copies take turns on the host, and the double buffer's gain is lost" {
    for run_no in $(runs); do
        echo "# run $run_no of $REPEATS"
        # the stage model is asked of, not the verdict: exit 4 is allowed here
        ./lab04 --quick --json >"$BATS_TEST_TMPDIR/r.json" || [ $? -eq 4 ]
        f="$BATS_TEST_TMPDIR/r.json"
        measured=$(report value "$f" pageable time)
        model=$(predicted "$f" pageable time)
        # The lab's model is no overlap at all, n(h+k+d); a run comes in
        # below it when kernels run while the host stages the next copy (an
        # H2D from pageable memory returns once its data is staged): 0.75 of
        # it on an H100 (2026-11-23, 12.3 against 16.4 ms). What cannot
        # overlap is the copies themselves: the one host thread stages each
        # in turn, so the run takes at least n(h+d), taken here at the
        # copies' p5 (host memcpy moves 5-10 GB/s within seconds), within
        # 10%. A run from pinned buffers would take about n max(h,k,d), far
        # below.
        low=$(pageable_copies "$f")
        ok "$measured >= 0.9 * $low" "pageable $measured ms, faster than its copies one after another ($low ms at their p5; no-overlap model $model ms)"
        paged=$(report value "$f" pageable speedup)
        pinned=$(report value "$f" "double buffered" speedup)
        # pageable copies 4-5x slower than pinned ones (lab02) leave the
        # double buffer under half its pinned speedup at any kernel ratio
        ok "$paged < 0.5 * $pinned" "pageable ${paged}x is not under half the pinned double buffer's ${pinned}x"
    done
}

# Once, not REPEATS times: three runs at each of seven ratios, and the peak is
# read across them, each ratio's speedup the median of its three (a burst of
# other traffic during one serial run must not make a peak). make results runs
# the same ratios at the default size for figure 3.
@test "lab04's speedup peaks where the kernel takes as long as the upload" {
    for ratio in 0.125 0.25 0.5 1 2 4 8; do
        for i in 1 2 3; do
            # the sweep's question is where the speedup peaks, not each run's verdict
            ./lab04 --quick --kernel-ratio "$ratio" --csv >"$BATS_TEST_TMPDIR/r-$ratio-$i.csv" ||
                [ $? -eq 4 ] || fail "lab04 --kernel-ratio $ratio failed"
        done
    done
    run python3 - "$BATS_TEST_TMPDIR" <<'PY'
import csv, glob, statistics, sys
runs = {}
for path in glob.glob(sys.argv[1] + "/r-*.csv"):
    rows = {(r["variant"], r["metric"]): r["value"] for r in csv.DictReader(open(path))}
    ratio = path.rsplit("/r-", 1)[1].rsplit("-", 1)[0]
    kernel_to_copy = float(rows["kernel", "time"]) / float(rows["H2D", "time"])
    runs.setdefault(ratio, []).append((float(rows["4 streams depth", "speedup"]), kernel_to_copy))
assert len(runs) == 7 and all(len(r) == 3 for r in runs.values()), runs
points = [(statistics.median(s for s, _ in r), statistics.median(k for _, k in r))
          for r in runs.values()]
peak = max(points)
print("4 streams: median speedup %.2fx at kernel/copy %.2f" % peak)
assert 0.5 <= peak[1] <= 2, sorted(points, key=lambda p: p[1])
PY
    assert_success
}

@test "ex04 as given verifies its results but does not overlap, names the TODO, and shows the correctness points only" {
    run ./ex04 --quick
    assert_failure 4
    assert_output --partial "[ok]   outputs_verified"
    assert_output --partial "observed: NO  pipeline_efficient"
    assert_output --partial "TODO(student)"
    assert_output --partial "What the grader would give"
    assert_output --regexp "\[pass\] outputs_verified +3/3 +mismatches 0, limit <= 0"
    assert_output --regexp "\[FAIL\] overlaps +0/3 +speedup [0-9.]+, needs >= 1.3"
    assert_output --partial "level 1: 3 of 10 points"
    assert_output --partial "level 2: 2 of 6 points (a second level, graded apart)"
    # level two earns 0 of 4 either way: judged and short, or, where too few
    # of its rounds counted (a fresh machine's link speeding up under it),
    # not judged and flagged, as the sol04 test below allows
    if [[ "$output" == *"not judged: level2_efficient"* ]]; then
        assert_output --regexp "\[FLAG\] level2_efficient +0/4 +not judged"
        echo "# ex04 as given: level two not judged in this run, too few rounds counted" >&3
    else
        assert_output --partial "observed: NO  level2_efficient"
        assert_output --regexp "\[FAIL\] level2_efficient +0/4 +level2_efficiency [0-9.]+, needs >= 0.9"
    fi
    assert_output --partial "total: 5 of 16 points for this run"
    ./ex04 --quick --json >"$BATS_TEST_TMPDIR/r.json" || true
    run report json "$BATS_TEST_TMPDIR/r.json"
    assert_output "4"
    # the buffer sets counted by the program's compute(), not by the student's code
    run report value "$BATS_TEST_TMPDIR/r.json" "your pipeline" buffer_sets
    assert_output "1"
}

@test "ex04 as given prints its level-2 efficiency, but not the model's bound for a double buffer (the prediction's answer) nor for its own shape" {
    run ./ex04 --quick
    refute_output --regexp "two streams, whole +efficiency_bound"
    # the row, not the hint's words that name it
    refute_output --regexp "predicted .*= the model's bound for your streams and pieces"
    assert_output --partial "(the model's value appears here once you write your prediction, LEVEL2_PREDICTED_EFFICIENCY: predict first, then run)"
    assert_output --regexp "your level-2 pipeline +efficiency +[0-9.]+ %"
    ./ex04 --quick --json >"$BATS_TEST_TMPDIR/r.json" || true
    withheld "$BATS_TEST_TMPDIR/r.json" measurements "two streams, whole"
    withheld "$BATS_TEST_TMPDIR/r.json" predictions "your level-2 pipeline" efficiency
    run report value "$BATS_TEST_TMPDIR/r.json" "your level-2 pipeline" efficiency
    assert_success
}

# The check pass (the grader's, under memcheck) runs 1 MiB batches once: no
# round of level two can count there, and the timing says nothing, so it
# verifies and judges none of it, as every exercise's check pass does.
@test "ex04 --check runs small batches once, checks every output and judges no timing" {
    run ./ex04 --check
    assert_success
    assert_line --regexp "^settings: .*--batches 4 --batch-mib 1 .*--check$"
    assert_output --partial "[ok]   outputs_verified"
    assert_output --partial "[ok]   level2_outputs_verified"
    assert_output --partial "--check: level one's timing not judged"
    assert_output --partial "--check: level two's timing not judged"
    refute_output --partial "level two: measured"
    refute_output --partial "pipeline_efficient"
    refute_output --partial "level2_rounds_counted"
    refute_output --partial "level2_efficient"
    refute_output --partial "What the grader would give"
    assert_output --partial "result: results correct, no effect judged in this run (exit 0)"
}

# At the default size, as lab04's effect is: --quick's smaller batches
# reached 81% once on an H100 machine where the default run reached 100%.
# A run whose level two found too few rounds that count (a double buffer's
# best over 84%, or the serial run off its stages: another process, or
# this machine's copies) is not judged and exits 4, saying so: 1 of 11
# quiet runs on one H100 (docs/results/h100-grading/README.md). Such a run
# is held to saying why, and at least one run must be judged.
@test "sol04 double-buffers with two sets, and at level two pipelines 4 streams, each reaching 90% of the ideal speedup" {
    [ -x ./sol04 ] || skip "solutions/ withheld"
    local judged=0
    for run_no in $(runs); do
        echo "# run $run_no of $REPEATS"
        run ./sol04
        assert_output --partial "observed: yes pipeline_efficient"
        assert_output --regexp "your pipeline +buffer_sets +2 count"
        assert_output --regexp "your level-2 pipeline +streams +4 count"
        # the reference has predicted: the model's bound for a double buffer is shown
        assert_output --regexp "two streams, whole +efficiency_bound"
        if [ "$status" -eq 4 ] && [[ "$output" == *"observed: NO  level2_rounds_counted"* ]]; then
            assert_output --partial "not judged: level2_efficient"
            assert_output --partial "level two: measured"
            echo "# run $run_no: level two not judged, too few rounds counted" >&3
            continue
        fi
        judged=$((judged + 1))
        assert_success
        assert_output --partial "observed: yes level2_rounds_counted"
        assert_output --partial "observed: yes level2_efficient"
        assert_output --partial "total: 16 of 16 points for this run"
    done
    ok "$judged >= 1" "no run of sol04 judged its level two"
}
