#!/usr/bin/env bats
# lab06 on a real GPU: every race caught, every fix clean, what each fix costs
# the host; and the exercise, as given, solved, and with a fixed delay in
# place of the event, which the runs with a slow producer catch. lab06's
# verdicts are asserted on one run each: where another process lets a late
# producer win (or slows the host), the lab runs the comparison again itself
# (--retries) and says why.

load test_helper
load repeat

setup() { require_gpu; }

racy="no_dependency reuse_race early_read"
fixed="event_wait host_sync reuse_fixed read_after_wait"

# What lab06 measures again when another process spoils it (lab_attempt's
# "what"): each race with its fix in turns, and (b) with (c) for the host's cost.
attempts_of() {
    case $1 in
    no_dependency) echo no_dependency ;;
    event_wait | host_sync) echo "event_wait+host_sync" ;;
    reuse_race | reuse_fixed) echo reuse_race ;;
    early_read | read_after_wait) echo early_read ;;
    esac
}

@test "lab06 --quick catches every race, finds every fix clean and accounts for its attempts" {
    json_run ./lab06 --quick
    for v in $racy; do
        observed "$f" "${v}_caught"
    done
    ok "$(from_json "$f" "{'event_wait_correct', 'host_sync_correct', 'reuse_fixed_correct', \
        'read_after_wait_correct', 'early_read_buffer_later'} \
        <= {c['name'] for c in d['checks'] if c['passed']}")" \
        "a check failed or is missing: $(from_json "$f" "d['checks']")"
    for what in no_dependency "event_wait+host_sync" reuse_race early_read; do
        attempts_told "$f" "$what"
    done
}

@test "lab06 --strict fails exactly the racy variants' checks and exits 1" {
    run -1 bash -c './lab06 --quick --strict --json >"$0"' "$BATS_TEST_TMPDIR/r.json"
    run report json "$BATS_TEST_TMPDIR/r.json"
    assert_output "1"
    failed=$(python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
print(" ".join(sorted(c["name"] for c in d["checks"] if not c["passed"])))' "$BATS_TEST_TMPDIR/r.json")
    assert_equal "$failed" "early_read_correct no_dependency_correct reuse_race_correct"
}

@test "each race gets nearly every result wrong, as the model predicts" {
    json_run ./lab06 --quick
    for v in $racy; do
        observed "$f" "${v}_caught"
        got=$(report value "$f" "$v" mismatches_per_run)
        want=$(from_json "$f" "[p['value'] for p in d['predictions'] \
            if p['variant'] == '$v' and p['metric'] == 'mismatches_per_run'][0]")
        # the model: every result wrong (a value can be right by a 1-in-2^32 chance)
        ok "$got >= 0.9 * $want" "$v: $got wrong per run, the model says $want"
        attempts_told "$f" "$v"
    done
    for v in $fixed; do
        run report value "$f" "$v" mismatches
        assert_output "0"
    done
}

@test "the event wait frees the host at once; cudaStreamSynchronize blocks it for the producer's delay" {
    json_run ./lab06 --quick --spin-ms 5
    issue=$(report value "$f" event_wait host_issue)
    blocked=$(report value "$f" host_sync host_blocked)
    ok "$issue < 0.5 and $blocked >= 4.5" \
        "event: $issue ms to issue; sync: $blocked ms blocked (producer 5 ms late)"
    observed "$f" event_wait_host_free
    observed "$f" host_sync_blocks_host
    attempts_told "$f" "event_wait+host_sync"
}

# An attempt runs all --reps runs again: every result of every attempt counts.
@test "every variant verifies every element of every run of every attempt" {
    json_run ./lab06 --quick --reps 4
    n=$(report get "$f" parameters.elements.value)
    for v in $racy $fixed; do
        attempts=$(report value "$f" "$(attempts_of "$v")" attempts)
        run report value "$f" "$v" checked
        assert_output "$((attempts * 4 * n))"
    done
}

@test "a default run works a few seconds and --quick under one" {
    within_budget 1.0 ./lab06 --quick
    within_budget 5.0 ./lab06
}

@test "ex06 as given gets results wrong at both levels, names the TODOs, exits 1, and shows the points of the bounds check only" {
    run ./ex06 --quick
    assert_failure 1
    assert_output --partial "[FAIL] pipeline_correct"
    assert_output --partial "[FAIL] stage2_after_stage1"
    assert_output --partial "TODO(student) in issue_pipeline()"
    # level two as given waits in neither direction: a slot read before it
    # was written in every run (the producer's upload alone puts it behind)
    assert_output --partial "[FAIL] level2_correct"
    assert_output --partial "[FAIL] level2_read_after_write"
    assert_output --partial "TODO(student) in issue_ring()"
    assert_output --partial "What the grader would give"
    assert_output --regexp "\[FAIL\] results_correct +0/3 +mismatches [0-9]+, needs <= 0"
    assert_output --regexp "\[pass\] stays_in_bounds +1/1"
    assert_output --regexp "\[FAIL\] level2_results_correct +0/2 +level2_runs_wrong 6, needs <= 0"
    assert_output --partial "level 1: 1 of 10 points"
    assert_output --partial "level 2: 0 of 6 points (a second level, graded apart)"
    assert_output --partial "total: 1 of 16 points for this run"
}

# Every run is checked (--reps and a warm-up), three words per element: what
# reached the host, and d_mid and d_out read on the GPU.
@test "sol06 is right over many runs on fresh inputs, a quarter with a slow producer, while the host never blocks" {
    for run_no in $(runs); do
        echo "# run $run_no of $REPEATS"
        ./sol06 --reps 100 --json >"$BATS_TEST_TMPDIR/s.json"
        f="$BATS_TEST_TMPDIR/s.json"
        run report json "$f"
        assert_output "0"
        run report value "$f" pipeline mismatches
        assert_output "0"
        n=$(report get "$f" parameters.elements.value)
        run report value "$f" pipeline checked
        assert_output "$((101 * 3 * n))"
        run report value "$f" pipeline slow_runs
        assert_output "25"
        within "$f" pipeline slowest_step 8 16
        run report value "$f" pipeline producer_busy_runs
        assert_output "100"
        ok "$(from_json "$f" "[c['passed'] for c in d['checks'] if c['name'] == 'stage2_after_stage1'] == [True]")" \
            "stage 2 started before stage 1 ended: $(from_json "$f" "d['checks']")"
        run report get "$f" verdict.observed
        assert_output "true"
    done
    run ./sol06 --quick
    assert_success
    assert_output --partial "observed: yes level2_producer_busy_on_return"
    assert_output --partial "total: 16 of 16 points for this run"
}

# Level two: every run checked, each item's result on the GPU; by the GPU's
# clock no slot read before it was written or overwritten before it was
# read, with a quarter of the timed runs each a slow producer and a slow
# consumer; the first stage 1 still running when issue_ring() returns.
@test "sol06's ring is right whichever stage is slow, reuses no slot early, and never makes the host wait" {
    [ -x ./sol06 ] || skip "solutions/ withheld"
    for run_no in $(runs); do
        echo "# run $run_no of $REPEATS"
        ./sol06 --reps 40 --json >"$BATS_TEST_TMPDIR/s.json"
        f="$BATS_TEST_TMPDIR/s.json"
        run report json "$f"
        assert_output "0"
        run report value "$f" ring mismatches
        assert_output "0"
        n=$(report get "$f" parameters.elements.value)
        run report value "$f" ring checked
        assert_output "$((41 * 6 * n / 4))"
        run report value "$f" ring slow_producer_runs
        assert_output "10"
        run report value "$f" ring slow_consumer_runs
        assert_output "10"
        run report value "$f" ring producer_busy_runs
        assert_output "40"
        for c in level2_read_after_write level2_no_overwrite_before_read; do
            ok "$(from_json "$f" "[c['passed'] for c in d['checks'] if c['name'] == '$c'] == [True]")" \
                "$c failed: $(from_json "$f" "d['checks']")"
        done
    done
}

# Level one's idea alone at level two (the racy fixture's issue_ring):
# consume waits for each write, produce never for a read. Right while the
# consumer keeps up; the runs with a slow consumer (a quarter) catch the
# overwrite, in the results and on the GPU's clock.
@test "ex06 catches a ring whose producer never waits for the consumer in the runs with a slow consumer" {
    make -s BINDIR="$BATS_TEST_TMPDIR/bin" EX_SRCS=tests/fixtures/submissions/racy/ex06_stream_races.cu ex06
    run -1 bash -c '"$1" --reps 40 --json >"$2"' _ "$BATS_TEST_TMPDIR/bin/ex06" "$BATS_TEST_TMPDIR/r.json"
    f="$BATS_TEST_TMPDIR/r.json"
    run report value "$f" ring slow_consumer_runs
    assert_output "10"
    ok "$(from_json "$f" "[c['passed'] for c in d['checks'] if c['name'] == 'level2_correct'] == [False]")" \
        "no wrong result without the reverse wait: $(from_json "$f" "d['checks']")"
    ok "$(from_json "$f" "[c['passed'] for c in d['checks'] if c['name'] == 'level2_no_overwrite_before_read'] == [False]")" \
        "the GPU's clock did not show a slot overwritten early: $(from_json "$f" "d['checks']")"
    ok "$(from_json "$f" "[c['passed'] for c in d['checks'] if c['name'] == 'level2_read_after_write'] == [True]")" \
        "the forward wait did not hold: $(from_json "$f" "d['checks']")"
}

# A "fix" a student may try: hold stage 2 back by a fixed 3 ms of the GPU's
# time instead of the event. Right while stage 1 takes its usual 2 ms, wrong
# in the runs where the program makes it 4-8x slower.
@test "ex06 catches a consumer held back by a fixed delay in the runs with a slow producer" {
    mkdir -p "$BATS_TEST_TMPDIR/delay"
    cat >"$BATS_TEST_TMPDIR/delay/ex06_stream_races.cu" <<'EOF'
#include "ex06.h"
#include "kernels.h"
#include "streamlab.h"

void issue_pipeline(const handoff *h)
{
    h->stage1();
    spin_for_ns<<<1, 1, 0, h->consume>>>(3000000); /* 1.5 x the usual slow step */
    CHECK_LAUNCH();
    h->stage2();
}

void issue_ring(const ring_job *job) /* level two as handed out: not under test here */
{
    for (int i = 0; i < job->items; i++) {
        job->stage1(i);
        job->stage2(i);
    }
}
EOF
    make -s BINDIR="$BATS_TEST_TMPDIR/bin" EX_SRCS="$BATS_TEST_TMPDIR/delay/ex06_stream_races.cu" ex06
    run -1 bash -c '"$1" --reps 40 --json >"$2"' _ "$BATS_TEST_TMPDIR/bin/ex06" "$BATS_TEST_TMPDIR/r.json"
    f="$BATS_TEST_TMPDIR/r.json"
    run report value "$f" pipeline slow_runs
    assert_output "10"
    ok "$(from_json "$f" "[c['passed'] for c in d['checks'] if c['name'] == 'pipeline_correct'] == [False]")" \
        "no wrong result with a fixed delay: $(from_json "$f" "d['checks']")"
    ok "$(from_json "$f" "[c['passed'] for c in d['checks'] if c['name'] == 'stage2_after_stage1'] == [False]")" \
        "the GPU's clock did not show stage 2 starting early: $(from_json "$f" "d['checks']")"
}
