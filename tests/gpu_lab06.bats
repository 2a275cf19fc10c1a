#!/usr/bin/env bats
# lab06 on a real GPU: every race caught, every fix clean, what each fix costs
# the host; and the exercise, as given and solved. lab06's verdicts are asserted
# on one run each: where another process lets a late producer win (or slows
# the host), the lab runs the comparison again itself (--retries) and says why.

load test_helper
load repeat

setup() { require_gpu; }

# json_run PROGRAM ARGS...: runs it with --json, asserting exit 0; the report in $f.
json_run() {
    run --separate-stderr "$@" --json
    f="$BATS_TEST_TMPDIR/r.json"
    printf '%s\n' "$output" >"$f"
    assert_success
}

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
