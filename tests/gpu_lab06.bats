#!/usr/bin/env bats
# lab06 on a real GPU: every race caught, every fix clean, what each fix costs
# the host; and the exercise, as given and solved.

load test_helper
load repeat

setup() { require_gpu; }

racy="no_dependency reuse_race early_read"
fixed="event_wait host_sync reuse_fixed read_after_wait"

@test "lab06 --quick catches every race and finds every fix clean (exit 0)" {
    for run_no in $(runs); do
        echo "# run $run_no of $REPEATS"
        run ./lab06 --quick
        assert_success
        for v in $racy; do
            assert_output --partial "observed: yes ${v}_caught"
        done
        for v in $fixed; do
            assert_output --partial "[ok]   ${v}_correct"
        done
        assert_output --partial "[ok]   early_read_buffer_later"
        assert_output --partial "result: results correct, effect observed (exit 0)"
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
    for run_no in $(runs); do
        echo "# run $run_no of $REPEATS"
        ./lab06 --quick --csv >"$BATS_TEST_TMPDIR/r.csv"
        for v in $racy; do
            got=$(report value "$BATS_TEST_TMPDIR/r.csv" "$v" mismatches_per_run)
            want=$(report value "$BATS_TEST_TMPDIR/r.csv" "$v" predicted_mismatches_per_run)
            # the model: every result wrong (a value can be right by a 1-in-2^32 chance)
            python3 -c "import sys; sys.exit(not $got >= 0.9 * $want)" ||
                fail "$v: $got wrong per run, the model says $want"
        done
        for v in $fixed; do
            run report value "$BATS_TEST_TMPDIR/r.csv" "$v" mismatches
            assert_output "0"
        done
    done
}

@test "the event wait frees the host at once; cudaStreamSynchronize blocks it for the producer's delay" {
    for run_no in $(runs); do
        echo "# run $run_no of $REPEATS"
        ./lab06 --quick --spin-ms 5 --csv >"$BATS_TEST_TMPDIR/r.csv"
        issue=$(report value "$BATS_TEST_TMPDIR/r.csv" event_wait host_issue)
        blocked=$(report value "$BATS_TEST_TMPDIR/r.csv" host_sync host_blocked)
        python3 -c "import sys; sys.exit(not ($issue < 0.5 and $blocked >= 4.5))" ||
            fail "event: $issue ms to issue; sync: $blocked ms blocked (producer 5 ms late)"
        run report value "$BATS_TEST_TMPDIR/r.csv" verdict event_wait_host_free
        assert_output "1"
        run report value "$BATS_TEST_TMPDIR/r.csv" verdict host_sync_blocks_host
        assert_output "1"
    done
}

@test "every variant verifies every element of every run" {
    ./lab06 --quick --reps 4 --csv >"$BATS_TEST_TMPDIR/r.csv"
    n=$(report value "$BATS_TEST_TMPDIR/r.csv" parameter elements)
    for v in $racy $fixed; do
        run report value "$BATS_TEST_TMPDIR/r.csv" "$v" checked
        assert_output "$((4 * n))"
    done
}

@test "a default run takes a few seconds and --quick under one" {
    start=$(date +%s%N)
    ./lab06 --quick >/dev/null
    ms=$((($(date +%s%N) - start) / 1000000))
    [ "$ms" -lt 1000 ] || fail "--quick took $ms ms"
    start=$(date +%s%N)
    ./lab06 >/dev/null
    ms=$((($(date +%s%N) - start) / 1000000))
    [ "$ms" -lt 5000 ] || fail "the default run took $ms ms"
}

@test "ex06 as given gets results wrong, names the TODO and exits 1" {
    run ./ex06 --quick
    assert_failure 1
    assert_output --partial "[FAIL] pipeline_correct"
    assert_output --partial "TODO(student) in issue_pipeline()"
}

@test "sol06 is right over many runs on fresh inputs while the host never blocks" {
    for run_no in $(runs); do
        echo "# run $run_no of $REPEATS"
        ./sol06 --reps 100 --json >"$BATS_TEST_TMPDIR/s.json"
        run report json "$BATS_TEST_TMPDIR/s.json"
        assert_output "0"
        run report value "$BATS_TEST_TMPDIR/s.json" pipeline mismatches
        assert_output "0"
        n=$(report get "$BATS_TEST_TMPDIR/s.json" parameters.elements.value)
        run report value "$BATS_TEST_TMPDIR/s.json" pipeline checked
        assert_output "$((100 * n))"
        run report value "$BATS_TEST_TMPDIR/s.json" pipeline producer_busy_runs
        assert_output "100"
        run report get "$BATS_TEST_TMPDIR/s.json" verdict.observed
        assert_output "true"
    done
}
