#!/usr/bin/env bats
# lab03 on a real GPU: events read the known duration, the host clock around a
# launch alone reads only the launch, and an early question gets cudaErrorNotReady.

load test_helper
load repeat

setup() { require_gpu; }

@test "lab03 --quick runs, verifies every launch and observes both verdicts" {
    for run_no in $(runs); do
        echo "# run $run_no of $REPEATS"
        run ./lab03 --quick
        assert_success
        assert_output --partial "[ok]   every_launch_logged"
        assert_output --partial "observed: yes events_match_known"
        assert_output --partial "observed: yes naive_host_misses"
        assert_output --partial "result: results correct, effect observed (exit 0)"
    done
}

@test "events read the known duration within 2%; the host clock without a wait under 10% of it" {
    for run_no in $(runs); do
        echo "# run $run_no of $REPEATS"
        ./lab03 --csv >"$BATS_TEST_TMPDIR/r.csv"
        run report csv "$BATS_TEST_TMPDIR/r.csv"
        assert_success
        known=$(report value "$BATS_TEST_TMPDIR/r.csv" "3 events in stream" predicted_duration)
        assert_equal "$known" "5"
        within "$BATS_TEST_TMPDIR/r.csv" "3 events in stream" duration "0.98 * $known" "1.02 * $known"
        within "$BATS_TEST_TMPDIR/r.csv" "1 host, no wait" duration 0 "0.10 * $known"
        # the host cannot see the end of a kernel before it has lasted its duration
        within "$BATS_TEST_TMPDIR/r.csv" "2 host + wait" duration "$known" "1e9"
        run report value "$BATS_TEST_TMPDIR/r.csv" result exit_code
        assert_output "0"
    done
}

@test "cudaEventElapsedTime before the stop event completes returns cudaErrorNotReady, handled" {
    for run_no in $(runs); do
        echo "# run $run_no of $REPEATS"
        run ./lab03 --quick
        assert_success
        assert_output --partial "way 4 returned cudaErrorNotReady"
        ./lab03 --quick --json >"$BATS_TEST_TMPDIR/r.json"
        run report value "$BATS_TEST_TMPDIR/r.json" "4 elapsed too early" not_ready
        assert_output "1"
        within "$BATS_TEST_TMPDIR/r.json" "4 elapsed too early" after_waiting 0.98 1.02
    done
}

@test "the first launch of the kernel costs more than the later ones" {
    for run_no in $(runs); do
        echo "# run $run_no of $REPEATS"
        ./lab03 --quick --json >"$BATS_TEST_TMPDIR/r.json"
        cold=$(report value "$BATS_TEST_TMPDIR/r.json" "first launch" launch_call)
        warm=$(report value "$BATS_TEST_TMPDIR/r.json" "later launches" launch_call)
        python3 -c "import sys; sys.exit(not $cold > $warm)" ||
            fail "first launch call $cold us, later ones $warm us"
    done
}

@test "--kernel-ms sets the known duration, and --quick keeps a value given" {
    for run_no in $(runs); do
        echo "# run $run_no of $REPEATS"
        ./lab03 --quick --kernel-ms 2 --json >"$BATS_TEST_TMPDIR/r.json"
        run report get "$BATS_TEST_TMPDIR/r.json" parameters.kernel_ms.value
        assert_output "2"
        within "$BATS_TEST_TMPDIR/r.json" "3 events in stream" duration 1.96 2.04
        within "$BATS_TEST_TMPDIR/r.json" "kernel's own clock" duration 2 2.04
    done
}

@test "ex03 as given measures nothing, reports a median of 0 and exits 4 naming the TODO" {
    run ./ex03 --quick
    assert_failure 4
    assert_output --partial "observed: NO  median_matches_known: not measured: complete TODO(student)"
    assert_output --partial "[ok]   every_launch_logged"
    ./ex03 --quick --json >"$BATS_TEST_TMPDIR/r.json" || true
    run report json "$BATS_TEST_TMPDIR/r.json"
    assert_output "4"
    run report value "$BATS_TEST_TMPDIR/r.json" "your harness" duration
    assert_output "0"
}

@test "the reference solution reports a median within 2% of the known duration" {
    [ -x ./sol03 ] || skip "solutions/ is not here"
    for run_no in $(runs); do
        echo "# run $run_no of $REPEATS"
        run ./sol03 --quick
        assert_success
        ./sol03 --json >"$BATS_TEST_TMPDIR/r.json"
        known=$(report get "$BATS_TEST_TMPDIR/r.json" predictions.0.value)
        within "$BATS_TEST_TMPDIR/r.json" "your harness" duration "0.98 * $known" "1.02 * $known"
        run report get "$BATS_TEST_TMPDIR/r.json" verdict.observed
        assert_output "true"
    done
}
