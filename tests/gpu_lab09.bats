#!/usr/bin/env bats
# lab09 on a real GPU: the calls CUDA documents do what it documents, with
# non-blocking and with blocking streams; every copy's data and every kernel's
# record verified; ex09 as given waits and serialises, its solution neither.
# Rows CUDA does not document are printed by the lab, never asserted here.

load test_helper
load repeat

setup() { require_gpu; }

# outcome FILE CALL COLUMN: the row's outcome code (0 neither, 1 GPU serialised,
# 2 host waited, 3 mixed, -1 not measured).
outcome() { report value "$1" "$2 | $3" outcome; }

@test "lab09 --quick verifies every kernel and call and observes every documented outcome" {
    json_run ./lab09 --quick
    for c in kernels_logged calls_delivered; do
        ok "$(from_json "$f" "[c['passed'] for c in d['checks'] if c['name'] == '$c'] == [True]")" \
            "$c failed or is missing: $(from_json "$f" "d['checks']")"
    done
    observed "$f" documented_nonblocking
    observed "$f" documented_blocking
}

@test "lab09 --quick does its work in under two seconds" {
    within_budget 2.0 ./lab09 --quick
}

# The documented rows, one by one, so that a failure names the call.
@test "lab09: explicit synchronisation and pageable D2H make the host wait, in both columns" {
    json_run ./lab09
    for col in non-blocking blocking; do
        for call in cudaDeviceSynchronize "D2H (A) + cudaStreamSynchronize(A)" \
            "cudaEventRecord(A)+EventSynchronize" "cudaMemcpyAsync D2H pageable (A)"; do
            run outcome "$f" "$call" "$col"
            assert_output "2"
        done
        # a call that waits returns K1's remaining time later: within 15% of the model
        within "$f" "cudaDeviceSynchronize | $col" call_ms "0.85 * 20" "1.15 * 20"
    done
}

@test "lab09: with blocking streams the legacy stream serialises; with non-blocking ones nothing does" {
    json_run ./lab09
    for call in cudaMemset "cudaMemcpy D2D" "kernel in the legacy stream"; do
        run outcome "$f" "$call" blocking
        assert_output "1"
        run outcome "$f" "$call" non-blocking
        assert_output "0"
    done
    for call in "cudaMemcpy H2D pageable" "cudaMemcpy D2H pinned" cudaMemcpyToSymbol; do
        run outcome "$f" "$call" blocking
        assert_output "2"
        run outcome "$f" "$call" non-blocking
        assert_output "0"
    done
    # K2 began after K1 ended where serialised, well before it otherwise
    within "$f" "cudaMemset | blocking" k2_start_after_k1_end_ms 0 1
    within "$f" "cudaMemsetAsync (A) | blocking" k2_start_after_k1_end_ms "-20.5" "-15"
}

@test "lab09 measures the lazy-loading row with kernels never launched before" {
    json_run ./lab09 --quick
    for col in non-blocking blocking; do
        run outcome "$f" "first launch of a kernel (A)" "$col"
        assert_output --regexp '^[0-3]$'
    done
}

@test "ex09 as given waits in every step, takes turns with the loader, exits 4 and scores the correctness points only" {
    run ./ex09 --quick
    assert_failure 4
    assert_output --partial "[ok]   losses_right"
    assert_output --partial "[ok]   params_right"
    assert_output --partial "observed: NO  host_does_not_wait"
    assert_output --partial "observed: NO  step_overlaps_loader"
    assert_output --partial "level 1: 2 of 10 points"
    # level two as given: the loss of the step just issued read back at once:
    # right, and the GPU idles through every stall of the host's
    assert_output --partial "[ok]   level2_reports_right"
    assert_output --partial "[ok]   level2_params_right"
    assert_output --partial "observed: NO  level2_gpu_never_idle"
    assert_output --regexp "\[pass\] level2_reports_right +2/2"
    assert_output --regexp "\[FAIL\] level2_gpu_never_idle +0/4 +level2_idle_fraction [0-9.]+, needs <= 0.05"
    assert_output --partial "level 2: 2 of 6 points (a second level, graded apart)"
    assert_output --partial "total: 4 of 16 points for this run"
}

@test "ex09 as given prints neither level two's least lag nor, before a prediction, the model's idle share; the grader's line has both" {
    every_format 4 ./ex09 --quick
    refute_output --partial "smallest_lag"
    refute_row "the model" idle_at_lag_2
    refute_output --partial "/ S at your lag K"
    refute_output --regexp "the model [0-9]+% at your lag"
    assert_output --partial '"metric":"gpu_idle"' # measured all the same
    assert_output --partial "the model's value appears here once you write your prediction, LEVEL2_PREDICTED_IDLE"
    grade_line ./ex09 --quick
    run from_json "$g" "d['level2_model_lag'] >= 3 and 0.1 < d['level2_model_idle_lag2'] < 0.25"
    assert_output "True"
}

@test "sol09 neither waits nor serialises, and at level two keeps the GPU busy through the stalls, over several runs" {
    [ -x ./sol09 ] || skip "solutions/ is not here"
    for run_no in $(runs); do
        echo "# run $run_no of $REPEATS"
        run ./sol09
        assert_success
        assert_output --partial "observed: yes host_does_not_wait"
        assert_output --partial "observed: yes step_overlaps_loader"
        assert_output --partial "[ok]   level2_reports_right"
        assert_output --partial "observed: yes level2_gpu_never_idle"
        assert_output --partial "total: 16 of 16 points for this run"
    done
    # the reference's prediction is the model's: idle 0.6 / 2.6 of the
    # longest stall at a lag of 2, the question's stall, not the run's
    # largest draw (which lies below it)
    json_run ./sol09
    run report value "$f" "your prediction" idle_at_lag_2
    python3 -c "import sys; sys.exit(not 23 < $output < 23.2)" || fail "your prediction: idle_at_lag_2 $output"
    run report value "$f" "the model" idle_at_lag_2
    python3 -c "import sys; sys.exit(not 23 < $output < 23.2)" || fail "the model: idle_at_lag_2 $output"
    run report value "$f" "your loop" largest_lag
    python3 -c "import sys; sys.exit(not $output == 3)" || fail "your loop: largest_lag $output"
    # the model's least lag, level two's design: the grader's line only
    grade_line ./sol09
    run from_json "$g" "int(d['level2_model_lag']), int(d['level2_lag'])"
    assert_output "3 3"
    run ./sol09 --quick
    assert_success
}
