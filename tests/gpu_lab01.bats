#!/usr/bin/env bats
# lab01 on a real GPU: a call on the legacy stream serialises two blocking
# streams; non-blocking streams and the per-thread stream do not; what stream 0
# means follows the build; events on the legacy stream mislead without the barrier.
# Each verdict is asserted on one run: the lab times the variants it compares in
# the same rounds, and where another process spoils them it measures again
# itself (--retries) and says why.

load test_helper
load repeat

setup() { require_gpu; }

# ratio FILE VARIANT1 VARIANT2: time of VARIANT1 / time of VARIANT2.
ratio() {
    local a b
    a=$(report value "$1" "$2" time) || fail "no $2 / time in $1"
    b=$(report value "$1" "$3" time) || fail "no $3 / time in $1"
    python3 -c "print($a / $b)"
}

@test "lab01 --quick verifies every launch, observes every verdict and accounts for its attempts" {
    json_run ./lab01 --quick
    ok "$(from_json "$f" "[c['passed'] for c in d['checks'] if c['name'] == 'every_launch_logged'] == [True]")" \
        "every_launch_logged failed or is missing: $(from_json "$f" "d['checks']")"
    for v in legacy_call_serialises per_thread_call_overlaps stream0_follows_build \
        legacy_events_mislead legacy_events_right_under_barrier; do
        observed "$f" "$v"
    done
    attempts_told "$f" "variants a to d"
    attempts_told "$f" "events on legacy"
}

@test "lab01 and lab01_ptds --quick each do their work in under one second" {
    for p in lab01 lab01_ptds; do
        within_budget 1.0 "./$p" --quick
    done
}

# The verdicts read the median of the rounds' ratios: (a) and (b) timed in
# the same rounds, so that a moment of other work slows both sides of a round.
@test "lab01 serialises two blocking streams when a legacy-stream call sits between them" {
    json_run ./lab01
    observed "$f" legacy_call_serialises
    # the model: serialised = 20 + 20 ms; overlapped = 20 ms; within 15%
    within "$f" "a blocking+legacy" time 40 "1.15 * 40"
    # (a) / (b) round by round went at least 80% of the way from 1 to 2
    way=$(from_json "$f" "[v['value'] for v in d['verdict']['items'] if v['name'] == 'legacy_call_serialises'][0]")
    ok "$way >= 80" "(a) / (b) went $way% of the way to serialised"
    # on the GPU's own clock the kernels did not run at once
    within "$f" "a blocking+legacy" overlap_on_gpu 0 0.1
    attempts_told "$f" "variants a to d"
}

@test "lab01 overlaps non-blocking streams and a per-thread-stream call, within 15% of the longest kernel" {
    json_run ./lab01
    observed "$f" per_thread_call_overlaps
    within "$f" "b nonblocking+legacy" time 20 "1.15 * 20"
    within "$f" "c blocking+perthread" time 20 "1.15 * 20"
    within "$f" "b nonblocking+legacy" overlap_on_gpu "0.85 * 20" "1.01 * 20"
    within "$f" "c blocking+perthread" overlap_on_gpu "0.85 * 20" "1.01 * 20"
    attempts_told "$f" "variants a to d"
}

@test "stream 0 is the legacy stream in lab01 and the per-thread stream in lab01_ptds" {
    ./lab01 --quick --json >"$BATS_TEST_TMPDIR/legacy.json"
    ./lab01_ptds --quick --json >"$BATS_TEST_TMPDIR/ptds.json"
    for p in legacy ptds; do
        observed "$BATS_TEST_TMPDIR/$p.json" stream0_follows_build
        attempts_told "$BATS_TEST_TMPDIR/$p.json" "variants a to d"
    done
    run report value "$BATS_TEST_TMPDIR/legacy.json" device per_thread_build
    assert_output "0"
    run report value "$BATS_TEST_TMPDIR/ptds.json" device per_thread_build
    assert_output "1"
    # --quick: two 5 ms kernels; (d) takes the sum in one build, the longest in the other
    within "$BATS_TEST_TMPDIR/legacy.json" "d blocking+stream0" time 10 "1.15 * 10"
    within "$BATS_TEST_TMPDIR/ptds.json" "d blocking+stream0" time 5 "1.15 * 5"
    # cudaStreamLegacy is the legacy stream in both builds
    within "$BATS_TEST_TMPDIR/ptds.json" "a blocking+legacy" time 10 "1.15 * 10"
    run report json "$BATS_TEST_TMPDIR/ptds.json"
    assert_output "0"
}

@test "lab01_ptds reports under its own name and says which stream 0 it has" {
    ./lab01_ptds --quick --json >"$BATS_TEST_TMPDIR/r.json" || [ $? -eq 4 ] # other tests judge the verdicts
    run report get "$BATS_TEST_TMPDIR/r.json" lab
    assert_output "lab01_ptds"
    run ./lab01_ptds --quick
    [ "$status" -eq 0 ] || [ "$status" -eq 4 ] || fail "exit $status"
    assert_output --partial "lab01_ptds: the legacy default stream"
    assert_output --partial "stream 0 is this thread's own stream"
}

# Each verdict reads events and the host clock around the same variant in the
# same round: (a) by events / (a) on the host clock, (b) likewise.
@test "events on the legacy stream read the serialised run right and the overlapped one near zero" {
    json_run ./lab01 --quick
    observed "$f" legacy_events_right_under_barrier
    observed "$f" legacy_events_mislead
    # the model: under the barrier the events bracket both kernels, 5 + 5 ms
    within "$f" "a events on legacy" time "0.9 * 10" "1.15 * 10"
    within "$f" "b events on legacy" time 0 "0.5 * 5"
    # while the kernels did run at once
    within "$f" "b events on legacy" overlap_on_gpu "0.85 * 5" "1.01 * 5"
    attempts_told "$f" "events on legacy"
}

@test "unequal kernels: the sum and the longest move with --first-ms and --second-ms" {
    json_run ./lab01 --quick --first-ms 8 --second-ms 2
    run from_json "$f" "[p['value'] for p in d['predictions'] if p['metric'] == 'time' \
        and p['variant'] in ('a blocking+legacy', 'b nonblocking+legacy')]"
    assert_output "[10, 8]"
    within "$f" "a blocking+legacy" time 10 "1.15 * 10"
    within "$f" "b nonblocking+legacy" time 8 "1.15 * 8"
    observed "$f" legacy_call_serialises
    attempts_told "$f" "variants a to d"
}

@test "lab01 cannot show the barrier with CUDA_LAUNCH_BLOCKING=1 and exits 3 saying why" {
    run --separate-stderr env CUDA_LAUNCH_BLOCKING=1 ./lab01 --quick
    assert_failure 3
    [ -z "$output" ] || fail "printed a report: $output"
    [[ "$stderr" == *"lab01: cannot run here: CUDA_LAUNCH_BLOCKING=1"* ]] || fail "$stderr"
}

@test "ex01 as given serialises its streams, exits 4 naming the TODO, and shows the correctness points only" {
    run ./ex01 --quick
    assert_failure 4
    assert_output --partial "[ok]   every_launch_logged"
    assert_output --partial "observed: NO  your_streams_overlap"
    assert_output --partial "TODO(student) in create_work_streams()"
    assert_output --partial "What the grader would give"
    assert_output --regexp "\[pass\] streams_work +2/2 +launches_wrong 0, limit <= 0"
    assert_output --regexp "\[FAIL\] kernels_overlap +0/8 +speedup_vs_blocking [0-9.]+, needs >= 1.8"
    # level two as handed out: each worker on its per-thread default stream
    assert_output --partial "[ok]   level2_every_launch_logged"
    assert_output --partial "observed: NO  level2_workers_overlap"
    assert_output --partial "TODO(student) in level2_worker_stream()"
    assert_output --regexp "\[pass\] level2_streams_work +2/2"
    assert_output --regexp "\[FAIL\] level2_workers_overlap +0/4 +level2_speedup_vs_per_thread [0-9.]+, needs >= 1.8"
    assert_output --partial "level 2: 2 of 6 points (a second level, graded apart)"
    assert_output --partial "total: 4 of 16 points for this run"
    ./ex01 --quick --json >"$BATS_TEST_TMPDIR/r.json" || true
    run report json "$BATS_TEST_TMPDIR/r.json"
    assert_output "4"
    run report value "$BATS_TEST_TMPDIR/r.json" "points preview" total
    assert_output "4"
}

@test "ex01 as given prints the per-thread streams' time but not the model's, the prediction's answer, in text or JSON" {
    run ./ex01 --quick
    assert_output --regexp "per-thread streams +time +[0-9.]+ ms"
    refute_output --regexp "per-thread streams +time +predicted"
    assert_output --partial "(the model's value appears here once you write your prediction, LEVEL2_PREDICTED_PER_THREAD_KERNELS: predict first, then run)"
    ./ex01 --quick --json >"$BATS_TEST_TMPDIR/r.json" || true
    withheld "$BATS_TEST_TMPDIR/r.json" predictions "per-thread streams"
    run report value "$BATS_TEST_TMPDIR/r.json" "per-thread streams" time
    assert_success
}

@test "the reference solution overlaps its streams at least 1.8x, the legacy call still there, at both levels" {
    [ -x ./sol01 ] || skip "solutions/ is not here"
    for run_no in $(runs); do
        echo "# run $run_no of $REPEATS"
        run ./sol01 --quick
        assert_success
        assert_output --partial "[ok]   every_launch_logged"
        assert_output --partial "observed: yes your_streams_overlap"
        assert_output --partial "observed: yes level2_workers_overlap"
        assert_output --partial "total: 16 of 16 points for this run"
        ./sol01 --json >"$BATS_TEST_TMPDIR/r.json"
        f="$BATS_TEST_TMPDIR/r.json"
        within "$f" "your streams" time 20 "1.15 * 20"
        run python3 -c "import sys; sys.exit(not $(ratio "$f" "given blocking" "your streams") >= 1.8)"
        assert_success
        # level two: the workers' per-thread default streams take turns (the
        # sum, lab01's model), the reference's non-blocking ones overlap
        within "$f" "per-thread streams" time 40 "1.15 * 40"
        within "$f" "your worker streams" time 20 "1.15 * 20"
    done
}
