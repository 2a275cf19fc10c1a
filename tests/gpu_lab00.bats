#!/usr/bin/env bats
# lab00 on a real GPU: a correct summary and a consistent link measurement.
# Each verdict is asserted on one run: where another process spoils a
# comparison, the lab measures it again itself (--retries) and says why.

load test_helper

setup() { require_gpu; }

@test "lab00 --quick verifies its bytes, observes what it checks and accounts for its attempts" {
    run --separate-stderr ./lab00 --quick --json
    printf '%s\n' "$output" >"$BATS_TEST_TMPDIR/r.json"
    assert_success
    ok "$(from_json "$BATS_TEST_TMPDIR/r.json" \
        "{'bytes_intact', 'affine_verified'} <= {c['name'] for c in d['checks'] if c['passed']}")" \
        "a check failed or is missing"
    for what in "pinned H2D vs plain loop" spin_for_ns affine_work; do
        attempts_told "$BATS_TEST_TMPDIR/r.json" "$what"
    done
}

@test "lab00 reports the GPU's overlap capabilities as the runtime states them" {
    ./lab00 --quick --json >"$BATS_TEST_TMPDIR/r.json" || [ $? -eq 4 ] # the first test judges the verdicts
    run report json "$BATS_TEST_TMPDIR/r.json"
    assert_success
    engines=$(report get "$BATS_TEST_TMPDIR/r.json" device.async_engine_count)
    run report value "$BATS_TEST_TMPDIR/r.json" device copy_engines
    assert_output "$engines"
    least=$(report get "$BATS_TEST_TMPDIR/r.json" device.priority_least)
    greatest=$(report get "$BATS_TEST_TMPDIR/r.json" device.priority_greatest)
    # lower is higher: the greatest priority is the smaller number
    [ "$greatest" -le "$least" ]
}

@test "lab00's single copies agree within 10% with a plain loop of copies, round by round" {
    ./lab00 --json >"$BATS_TEST_TMPDIR/r.json" || [ $? -eq 4 ]
    for row in "pinned H2D" "plain loop H2D"; do
        report value "$BATS_TEST_TMPDIR/r.json" "$row" bandwidth >/dev/null || fail "no $row row"
    done
    # the verdict reads the median of the rounds' ratios, not the two rows' medians
    observed "$BATS_TEST_TMPDIR/r.json" bandwidth_consistent
    attempts_told "$BATS_TEST_TMPDIR/r.json" "pinned H2D vs plain loop"
}

@test "spin_for_ns lasts the time asked within 2%, at several durations" {
    for ms in 1 5 20; do
        ./lab00 --quick --spin-ms "$ms" --json >"$BATS_TEST_TMPDIR/r$ms.json" || [ $? -eq 4 ]
        observed "$BATS_TEST_TMPDIR/r$ms.json" spin_keeps_time
        attempts_told "$BATS_TEST_TMPDIR/r$ms.json" spin_for_ns
    done
}

@test "--device past the last GPU is a usage error listing the GPUs" {
    run --separate-stderr ./lab00 --device 63
    assert_failure 2
    [[ "${stderr_lines[0]}" == *"--device 63 does not exist"* ]]
    [[ "$stderr" == *"--device 0 "* ]]
}
