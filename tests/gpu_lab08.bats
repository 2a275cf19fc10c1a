#!/usr/bin/env bats
# lab08 on a real GPU: the event chain against its model, the host free
# while the GPU waits, the slowest stage setting the pace, whole-GPU stages
# gaining nothing, a blocking wait freeing the CPU; --no-wait caught; and the
# exercise as given (no concept point) and solved (full marks). Verdicts are
# asserted on one run each: where another process spoils a comparison, the
# lab measures it again itself (--retries) and says why.

load test_helper

setup() { require_gpu; }

verdicts="event_chain_follows_model slowest_stage_sets_pace whole_gpu_stages_no_gain \
event_chain_host_free host_chain_blocks_host blocking_sync_frees_cpu"

@test "lab08 --quick observes every verdict, its results verified" {
    json_run ./lab08 --quick
    for v in $verdicts; do
        observed "$f" "$v"
    done
    for what in "host-chained vs event-chained" "spin vs blocking sync"; do
        attempts_told "$f" "$what"
    done
}

@test "lab08 (default) reproduces the probe: event-chained within 15% of sum(t) + (B-1) max(t), host blocked ~ the whole host-chained run" {
    json_run ./lab08
    for v in $verdicts; do
        observed "$f" "$v"
    done
    # 16 x 3 x 1 ms: host-chained model 48 ms, event-chained 18 ms (probe 48.6, 18.1)
    within "$f" "balanced, host-chained" time 48 "48 * 1.15"
    within "$f" "balanced, event-chained" time "18 * 0.85" "18 * 1.15"
    within "$f" "balanced, event-chained" host_blocked 0 "18 * 0.1"
}

@test "lab08 --no-wait races: the stages' words and spans are wrong, and it exits 1" {
    run -1 bash -c './lab08 --quick --no-wait --retries 0 --json >"$0"' "$BATS_TEST_TMPDIR/r.json"
    failed=$(python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
print(" ".join(sorted(c["name"] for c in d["checks"] if not c["passed"])))' "$BATS_TEST_TMPDIR/r.json")
    assert_equal "$failed" "pipeline_results_verified stages_in_order"
}

@test "ex08 as given is right and in order, earns no concept point, and exits 4" {
    run ./ex08 --quick
    assert_failure 4
    assert_output --partial "[ok]   results_verified"
    assert_output --partial "What the grader would give"
    assert_output --regexp "\[FAIL\] overlaps +0/3"
    assert_output --regexp "\[FAIL\] host_free +0/3"
    assert_output --partial "level 1: 4 of 10 points"
    # level two as given: host-chained through the fork and the join: right, serial
    assert_output --partial "[ok]   level2_results_verified"
    assert_output --partial "[ok]   level2_stages_in_order"
    assert_output --partial "observed: NO  level2_pipeline_reaches_model"
    assert_output --regexp "\[pass\] level2_results_correct +2/2"
    assert_output --regexp "\[FAIL\] level2_fork_join +0/4 +level2_efficiency [0-9.]+, needs >= 0.9"
    assert_output --partial "level 2: 2 of 6 points (a second level, graded apart)"
    assert_output --partial "total: 6 of 16 points for this run"
}

@test "ex08 as given does not print the model's fraction for level one's way at level two, the prediction's answer" {
    run ./ex08 --quick
    refute_output --regexp "level one's way +efficiency_bound"
    refute_output --partial "the model's fraction for level one's way here"
    assert_output --partial "(the model's value appears here once you write your prediction, LEVEL2_PREDICTED_EFFICIENCY: predict first, then run)"
    ./ex08 --quick --json >"$BATS_TEST_TMPDIR/r.json" || true
    withheld "$BATS_TEST_TMPDIR/r.json" measurements "level one's way"
}

@test "sol08 reaches the model with the host free, and at level two the fork-join's model, full marks" {
    json_run ./sol08
    observed "$f" pipeline_reaches_model
    observed "$f" level2_pipeline_reaches_model
    # the reference's prediction is the model at the mean times: 4.4 / 5.4 ms
    run report value "$f" "your prediction" efficiency_bound
    python3 -c "import sys; sys.exit(not abs($output - 81.5) < 0.1)" || fail "prediction $output"
    # the reference has predicted: the model's fraction for level one's way is shown
    run report value "$f" "level one's way" efficiency_bound
    assert_success
    run report value "$f" "points preview" total
    assert_output "16"
    run ./sol08 --quick
    assert_success
}

@test "sol08 --check runs the small sizes with every correctness check passing" {
    run ./sol08 --check
    [ "$status" -ne 1 ] || fail "sol08 --check exited 1: $output"
    assert_output --partial "[ok]   results_verified"
    assert_output --partial "[ok]   stages_in_order"
    assert_output --partial "[ok]   stages_queued_once"
    assert_output --partial "[ok]   level2_results_verified"
    assert_output --partial "[ok]   level2_stages_in_order"
    assert_output --partial "[ok]   level2_stages_queued_once"
}
