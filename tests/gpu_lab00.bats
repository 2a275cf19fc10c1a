#!/usr/bin/env bats
# lab00 on a real GPU: a correct summary and a consistent link measurement.

load test_helper
load repeat

setup() { require_gpu; }

@test "lab00 --quick runs, verifies its bytes and observes what it checks" {
    for run_no in $(runs); do
        echo "# run $run_no of $REPEATS"
        run ./lab00 --quick
        assert_success
        assert_output --partial "[ok]   bytes_intact"
        assert_output --partial "[ok]   affine_verified"
        assert_output --partial "result: results correct, effect observed (exit 0)"
    done
}

@test "lab00 reports the GPU's overlap capabilities as the runtime states them" {
    ./lab00 --quick --json >"$BATS_TEST_TMPDIR/r.json"
    run report json "$BATS_TEST_TMPDIR/r.json"
    assert_output "0"
    engines=$(report get "$BATS_TEST_TMPDIR/r.json" device.async_engine_count)
    run report value "$BATS_TEST_TMPDIR/r.json" device copy_engines
    assert_output "$engines"
    least=$(report get "$BATS_TEST_TMPDIR/r.json" device.priority_least)
    greatest=$(report get "$BATS_TEST_TMPDIR/r.json" device.priority_greatest)
    # lower is higher: the greatest priority is the smaller number
    [ "$greatest" -le "$least" ]
}

@test "lab00's pinned bandwidth agrees within 10% with a plain loop of copies" {
    for run_no in $(runs); do
        echo "# run $run_no of $REPEATS"
        ./lab00 --csv >"$BATS_TEST_TMPDIR/r.csv"
        one=$(report value "$BATS_TEST_TMPDIR/r.csv" "pinned H2D" bandwidth)
        loop=$(report value "$BATS_TEST_TMPDIR/r.csv" "plain loop H2D" bandwidth)
        python3 -c "import sys; a, b = $one, $loop; sys.exit(abs(a - b) / b > 0.10)" ||
            fail "measure() gave $one GB/s, the plain loop $loop GB/s"
        run report value "$BATS_TEST_TMPDIR/r.csv" verdict bandwidth_consistent
        assert_output "1"
    done
}

@test "spin_for_ns lasts the time asked within 2%, at several durations" {
    for run_no in $(runs); do
        echo "# run $run_no of $REPEATS"
        for ms in 1 5 20; do
            run ./lab00 --quick --spin-ms "$ms"
            assert_output --partial "observed: yes spin_keeps_time"
        done
    done
}

@test "--device past the last GPU is a usage error listing the GPUs" {
    run --separate-stderr ./lab00 --device 63
    assert_failure 2
    [[ "${stderr_lines[0]}" == *"--device 63 does not exist"* ]]
    [[ "$stderr" == *"--device 0 "* ]]
}
