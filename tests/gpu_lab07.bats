#!/usr/bin/env bats
# lab07 on a real GPU: kernels that hold an eighth of the SMs run eight at
# once on eight streams, kernels that hold every SM take turns whatever the
# streams; kernel pairs issued depth-first wait behind each other in the
# hardware queues (CUDA_DEVICE_MAX_CONNECTIONS), breadth-first they do not.
# Every number is the lab's own: its ways timed in the same rounds, its
# verdicts on the median round, each block's record checked.

load test_helper

setup() { require_gpu; }

checks_pass() {
    ok "$(from_json "$1" "all(c['passed'] for c in d['checks']) and len(d['checks']) == 3")" \
        "a check failed or is missing: $(from_json "$1" "d['checks']")"
}

@test "lab07 --quick verifies every block, observes every verdict and accounts for its attempts" {
    json_run ./lab07 --quick
    checks_pass "$f"
    for v in small_kernels_concurrent whole_gpu_kernels_not_concurrent breadth_first_takes_2T \
        depth_first_follows_queues; do
        observed "$f" "$v"
    done
    attempts_told "$f" "one stream vs eight"
    attempts_told "$f" "depth-first vs breadth-first"
}

@test "lab07 --quick does its work in under one second" {
    within_budget 1.0 ./lab07 --quick
}

# The model: T x ceil(8 x blocks / SMs) on eight streams, 8T on one; 15% for
# launches and the host's clock around 2 ms kernels.
@test "streams run small kernels at once and whole-GPU kernels in turn, as T x ceil(n x blocks / SMs)" {
    json_run ./lab07
    within "$f" "1/8 GPU, 8 streams" time 2 "1.15 * 2"
    within "$f" "1/2 GPU, 8 streams" time 8 "1.15 * 8"
    within "$f" "whole GPU, 8 streams" time "0.95 * 16" "1.05 * 16"
    within "$f" "1/8 GPU, 1 stream" time "0.95 * 16" "1.05 * 16"
    within "$f" "1/2 GPU" speedup "0.85 * 2" "1.05 * 2"
}

# near_model FILE VARIANT: its time within 15% of the time the lab predicted.
near_model() {
    local p
    p=$(from_json "$1" "[p['value'] for p in d['predictions'] if p['variant'] == '$2' and p['metric'] == 'time'][0]") ||
        fail "no prediction for $2"
    within "$1" "$2" time "0.95 * $p" "1.15 * $p"
}

# Depth-first with c queues: (ceil(n/c)+1) x T; the A kernels that wait are
# those queued behind another stream's B: n - c of them.
@test "with one hardware queue, depth-first pairs take (n+1)T and every A but the first waits" {
    json_run ./lab07 --quick --connections 1 --streams 8
    run report value "$f" device max_connections
    assert_output "1"
    observed "$f" depth_first_follows_queues
    within "$f" depth-first time "0.9 * 9" "1.15 * 9"
    near_model "$f" depth-first
    run report value "$f" depth-first a_kernels_waited
    assert_output "7"
    run report value "$f" breadth-first a_kernels_waited
    assert_output "0"
}

@test "with 32 hardware queues, 16 streams depth-first take 2T like breadth-first" {
    json_run ./lab07 --quick --connections 32
    observed "$f" depth_first_follows_queues
    near_model "$f" depth-first
    near_model "$f" breadth-first
    run report value "$f" depth-first a_kernels_waited
    assert_output "0"
}

@test "CUDA_DEVICE_MAX_CONNECTIONS from the environment is what lab07 reports and models" {
    json_run env CUDA_DEVICE_MAX_CONNECTIONS=4 ./lab07 --quick --streams 8
    run report value "$f" device max_connections
    assert_output "4"
    observed "$f" depth_first_follows_queues
    run report value "$f" depth-first a_kernels_waited
    assert_output "4"
}

# 128 streams: the host's launches (L each, a few us) add (n-1)L to 2T, and
# the lab's model says so; no A waits beyond its launch's arrival.
@test "with 128 streams the launches' own time is in the model, and breadth-first no A waits" {
    json_run ./lab07 --quick --streams 128
    observed "$f" breadth_first_takes_2T
    observed "$f" depth_first_follows_queues
    near_model "$f" breadth-first
    run report value "$f" breadth-first a_kernels_waited
    assert_output "0"
    run report value "$f" depth-first a_kernels_waited
    assert_output "120"
}

@test "ex07 as given serves every request in one stream, exits 4 naming the TODO, and earns the correctness points only" {
    run ./ex07 --quick
    assert_failure 4
    assert_output --partial "[ok]   requests_verified"
    assert_output --partial "observed: NO  pool_reaches_model"
    assert_output --partial "your pool used 1 stream; at most 1 requests ran at once"
    assert_output --regexp "\[pass\] requests_served +3/3"
    assert_output --regexp "\[FAIL\] requests_overlap +0/3 +peak_at_once 1, needs >= 2"
    assert_output --regexp "\[FAIL\] pool_reaches_model +0/4"
    assert_output --partial "level 1: 3 of 10 points"
    # level two as given: every step in one stream, in order: right, and serial
    assert_output --partial "[ok]   level2_requests_verified"
    assert_output --partial "observed: NO  level2_pool_reaches_model"
    assert_output --regexp "\[pass\] level2_requests_served +2/2"
    assert_output --regexp "\[FAIL\] level2_pool_reaches_model +0/4 +level2_efficiency [0-9.]+, needs >= 0.8"
    assert_output --partial "level 2: 2 of 6 points (a second level, graded apart)"
    assert_output --partial "total: 5 of 16 points for this run"
}

@test "ex07 as given does not print the model's bound for level one's way at level two, the prediction's answer" {
    run ./ex07 --quick
    refute_output --regexp "a stream each, in turn +efficiency_bound"
    refute_output --partial "the model's best for level one's way here"
    assert_output --partial "(the model's value appears here once you write your prediction, LEVEL2_PREDICTED_EFFICIENCY: predict first, then run)"
    ./ex07 --quick --json >"$BATS_TEST_TMPDIR/r.json" || true
    withheld "$BATS_TEST_TMPDIR/r.json" measurements "a stream each, in turn"
}

@test "the reference pool reaches the model's speedup: 8 requests at once, and at level two every request at once, full marks" {
    [ -x ./sol07 ] || skip "solutions/ is not here"
    json_run ./sol07
    observed "$f" pool_reaches_model
    run report value "$f" "your pool" peak_at_once
    assert_output "8"
    run report value "$f" "your pool" streams_used
    assert_output "8"
    # a quarter of the GPU each: four at once, whatever the pool (model 4x, 15%)
    within "$f" "1/4 GPU" speedup "0.85 * 4" "1.05 * 4"
    # level two: a stream per request, every step 0 first: all 32 at once on
    # an H100 (33 fit), none of them held back in a hardware queue
    observed "$f" level2_pool_reaches_model
    run report value "$f" "your level-2 pool" streams_used
    assert_output "32"
    run report value "$f" "your level-2 pool" first_steps_late
    assert_output "0"
    # the reference has predicted: the model's bound for level one's way is shown
    run report value "$f" "a stream each, in turn" efficiency_bound
    assert_success
    run report value "$f" "points preview" total
    assert_output "16"
}
