#!/usr/bin/env bats
# The report formats and the statistics helper, driven by host-only programs
# with fixed inputs (tests/tools/), so no GPU is needed.

load test_helper

@test "the median, p5, p95, min, max and mean of 1..10 are those worked out by hand" {
    run "$TOOLS/stats_test" 10 9 8 7 6 5 4 3 2 1
    assert_success
    # p5 = 1 + 0.05 * 9 = 1.45, p95 = 1 + 0.95 * 9 = 9.55 (linear between ranks)
    assert_output "n=10 median=5.5 p5=1.45 p95=9.55 min=1 max=10 mean=5.5 spread=1.47273"
}

@test "the median of an odd count is the middle sample, and one sample is every statistic" {
    run "$TOOLS/stats_test" 3 100 1
    assert_output --partial "median=3 "
    assert_output --partial "mean=34.6667"
    run "$TOOLS/stats_test" 7.5
    assert_output "n=1 median=7.5 p5=7.5 p95=7.5 min=7.5 max=7.5 mean=7.5 spread=0"
}

@test "a rate from times swaps p5 and p95: 100 over 1..10" {
    run "$TOOLS/stats_test" --over 100 10 9 8 7 6 5 4 3 2 1
    assert_success
    # median 100/5.5, p5 = 100/p95 = 100/9.55, p95 = 100/1.45, min 100/10, max 100/1,
    # mean 100/5.5, spread (68.9655 - 10.4712) / 18.1818
    assert_output "n=10 median=18.1818 p5=10.4712 p95=68.9655 min=10 max=100 mean=18.1818 spread=3.21719"
}

@test "one outlier moves the mean but not the median" {
    run "$TOOLS/stats_test" 1 1 1 1 1 1 1 1 1 1000
    assert_output --partial "median=1 "
    assert_output --partial "mean=100.9"
}

@test "--csv prints the header and five fields a row, a quoted GPU name kept whole" {
    "$TOOLS/report_test" --csv >"$BATS_TEST_TMPDIR/r.csv"
    run report csv "$BATS_TEST_TMPDIR/r.csv"
    assert_success
    run report value "$BATS_TEST_TMPDIR/r.csv" device name
    assert_output 'Test GPU, "fake" edition'
    run report value "$BATS_TEST_TMPDIR/r.csv" "variant b" predicted_time
    assert_output "2.5"
    run report value "$BATS_TEST_TMPDIR/r.csv" "variant a" time_p95
    assert_output "4.8"
    run report value "$BATS_TEST_TMPDIR/r.csv" result exit_code
    assert_output "0"
    # a verdict's value and the limits it was held to, a share's as percentages
    # (report_test.c: effect at least 1.8x, second -0.02 to 0.02 as a "%")
    run grep ',verdict,\(effect\|second\)_' "$BATS_TEST_TMPDIR/r.csv"
    assert_output "report_test,verdict,effect_value,1.95,x
report_test,verdict,effect_min,1.8,x
report_test,verdict,second_value,0.1,%
report_test,verdict,second_min,-2,%
report_test,verdict,second_max,2,%"
}

@test "--json prints one document with device, parameters, measurements, predictions, checks and verdict" {
    "$TOOLS/report_test" --json --size 12.5 >"$BATS_TEST_TMPDIR/r.json"
    run report json "$BATS_TEST_TMPDIR/r.json"
    assert_success
    assert_output "0"
    run report get "$BATS_TEST_TMPDIR/r.json" device.name
    assert_output 'Test GPU, "fake" edition'
    run report get "$BATS_TEST_TMPDIR/r.json" parameters.size.value
    assert_output "12.5"
    run report get "$BATS_TEST_TMPDIR/r.json" measurements.1.stats.p5
    assert_output "1.2"
    run report get "$BATS_TEST_TMPDIR/r.json" predictions.0.value
    assert_output "2.5"
    run report get "$BATS_TEST_TMPDIR/r.json" verdict.observed
    assert_output "true"
}

@test "the text report prints prediction beside measurement with its model, checks and verdicts with their limits" {
    run "$TOOLS/report_test"
    assert_success
    assert_output --partial "the model, and what each line means: tests/cpu_report.bats"
    assert_output --regexp "variant b +time +predicted +2.500 +measured +3 ms +x1.20 .* = a \+ b"
    assert_output --partial "[ok]   verified: 0 mismatches"
    assert_output --partial "[ok]   outputs: 0 of 100 outputs differ"
    assert_output --partial "observed: yes effect: ratio 1.95 (limit: at least 1.8x)"
    assert_output --partial "observed: yes second: off by a little (limit: -2% to 2%)"
    assert_output --partial "result: results correct, effect observed (exit 0)"
    refute_output --partial "likely reason"
}

@test "a run that judged no verdict exits 0 without claiming an effect, in text and JSON" {
    run "$TOOLS/report_test" --no-verdicts
    assert_success
    assert_output --partial "result: results correct, no effect judged in this run (exit 0)"
    refute_output --partial "effect observed"
    run "$TOOLS/report_test" --no-verdicts --json
    assert_success
    assert_output --partial '"exit_meaning":"results correct, no effect judged in this run"'
}

@test "a failed check exits 1 in every format" {
    for fmt in "" --csv --json; do
        run "$TOOLS/report_test" --fail-check $fmt
        assert_failure 1
    done
    run "$TOOLS/report_test" --fail-check
    assert_output --partial "[FAIL] verified: 7 mismatches"
    assert_output --partial "[FAIL] outputs: 3 of 100 outputs differ; the first: element 42 in variant a"
}

@test "an effect not observed exits 4 and prints the hint each failed verdict declared" {
    run "$TOOLS/report_test" --not-observed
    assert_failure 4
    assert_output --partial "observed: NO  effect: ratio 1.10 (limit: at least 1.8x)"
    assert_output --partial "likely reason for effect: a made-up reason"
    assert_output --partial "likely reason for second: another made-up reason"
    "$TOOLS/report_test" --json --not-observed >"$BATS_TEST_TMPDIR/r.json" || true
    run report get "$BATS_TEST_TMPDIR/r.json" verdict.observed
    assert_output "false"
    run report get "$BATS_TEST_TMPDIR/r.json" verdict.hint
    assert_output "a made-up reason"
    run report get "$BATS_TEST_TMPDIR/r.json" verdict.items.0.value
    assert_output "1.1"
    run report get "$BATS_TEST_TMPDIR/r.json" verdict.items.0.limit
    assert_output "at least 1.8x"
    run report get "$BATS_TEST_TMPDIR/r.json" verdict.items.1.hint
    assert_output "another made-up reason"
    run report get "$BATS_TEST_TMPDIR/r.json" exit_code
    assert_output "4"
    "$TOOLS/report_test" --json >"$BATS_TEST_TMPDIR/ok.json"
    run report get "$BATS_TEST_TMPDIR/ok.json" verdict.items.0.hint
    assert_output "null"
}

@test "a part that cannot run here exits 3, and still prints the hints of the verdicts judged and missed before it" {
    run --separate-stderr "$TOOLS/report_test" --not-observed --cannot-show
    assert_failure 3
    assert_equal "$stderr" "report_test: cannot run here: part 3 needs 2 GPUs"
    assert_output --partial "observed: NO  effect: ratio 1.10 (limit: at least 1.8x)"
    assert_output --partial "likely reason for effect: a made-up reason"
    run --separate-stderr "$TOOLS/report_test" --cannot-show
    assert_failure 3
    refute_output --partial "likely reason"
}

@test "a verdict judged on a traced run says so, and a miss names the tracing before any other reason" {
    run "$TOOLS/report_test" --timeline
    assert_success
    assert_output --partial "observed: yes effect: ratio 1.95 (limit: at least 1.8x; judged on a traced run)"
    run "$TOOLS/report_test" --not-observed --timeline
    assert_failure 4
    assert_output --partial "observed: NO  effect: ratio 1.10 (limit: at least 1.8x; judged on a traced run)"
    first=$(grep -m1 '^likely reason' <<<"$output")
    assert_equal "$first" "likely reason for effect: this run was traced (--trace/--timeline), so CUPTI's overhead is in its timings, and the limits are for untraced runs: run it again without tracing before trusting the reasons below"
    assert_output --partial "likely reason for effect: a made-up reason"
    # untraced, not a word of it
    run "$TOOLS/report_test" --not-observed
    refute_output --partial "traced"
}

@test "--quick sets the table's quick values, never one the user typed, and --dry-run shows them" {
    run "$TOOLS/report_test" --help
    assert_output --partial "(0.5 to 1024; default 64, --quick 2)"
    assert_output --partial "(1 to 10000; default 3, --quick 1)"
    run "$TOOLS/report_test" --dry-run
    assert_success
    assert_output --partial "--size 64"
    run "$TOOLS/report_test" --quick --dry-run
    assert_output --partial "--size 2"
    assert_output --partial "--reps 1"
    run "$TOOLS/report_test" --size 8 --reps 4 --quick --dry-run
    assert_output --partial "--size 8"
    assert_output --partial "--reps 4"
}

@test "the exit codes the programs print are the ones README documents" {
    run ./lab00 --help
    for code in "0  results correct, effect observed" "1  results wrong" "2  usage error" \
                "3  cannot run here" "4  results correct, effect not observed"; do
        assert_output --partial "$code"
        grep -qF "| ${code%%  *} |" README.md || fail "README.md has no row for exit code ${code%%  *}"
    done
}

@test "stats_of_ratios: the median of per-pair ratios, not a ratio of medians" {
    # medians 5 and 2 would say 2.5; the pairs say 2 (two of three pairs)
    run "$TOOLS/stats_test" --pairs 2:1 8:4 5:1
    assert_success
    assert_output --partial "n=3 median=2 "
}

@test "stats_of_differences: the median of per-pair differences, not a difference of medians" {
    # medians 5 and 2 would say 3; the pairs say 1, 4 and 4: a median of 4
    run "$TOOLS/stats_test" --diffs 2:1 8:4 5:1
    assert_success
    assert_output --partial "n=3 median=4 "
}

# machine_test RAW MAX_MHZ, then the start and now: H2D D2H HOST LAUNCH MHZ LOST PROBE
QUIET="55 55 12 6 1980 0 5"

@test "machine_interference: two quiet moments of an H100 show nothing" {
    run "$TOOLS/machine_test" 63 1980 $QUIET 54 55 11.5 7 1965 0.01 5
    assert_success
    assert_line --index 0 "0"
}

@test "machine_interference: a link at 31 of 55 GB/s is named, with both rates" {
    run "$TOOLS/machine_test" 63 1980 $QUIET 31 55 12 6 1980 0 5
    assert_line --index 0 "1"
    assert_output --partial "the link ran at 31-55 GB/s H2D (the link's raw rate: 63): another process may be copying, or the machine has just started (a fresh one's first copies run slow)"
}

@test "machine_interference: a link slow from the start is caught against its raw rate" {
    run "$TOOLS/machine_test" 63 1980 30 30 12 6 1980 0 5 31 31 12 6 1980 0 5
    assert_line --index 0 "2"
    assert_output --partial "the link ran at 30-31 GB/s D2H"
}

@test "machine_interference: without the raw rate only a change counts" {
    run "$TOOLS/machine_test" 0 0 30 30 12 6 0 0 0 31 31 12 6 0 0 0
    assert_line --index 0 "0"
}

@test "machine_interference: host memcpy, launches, the clock and time slicing are each named" {
    run "$TOOLS/machine_test" 63 1980 $QUIET 55 55 4 40 1500 3 5
    assert_line --index 0 "4"
    assert_output --partial "host memcpy ran at 4.0-12.0 GB/s"
    assert_output --partial "an empty kernel took 6-40 us from launch to done"
    assert_output --partial "the SM clock ran at 1500 MHz of its 1980"
    assert_output --partial "the GPU ran another process's work for 3.0 ms of a 5.0 ms probe"
}

@test "machine_interference: launches a few us slower are the host's jitter, not interference" {
    run "$TOOLS/machine_test" 63 1980 $QUIET 55 55 12 14 1980 0 5
    assert_line --index 0 "0"
}

@test "attempts: a row per comparison in CSV, and nothing more in the text when the first attempt held" {
    run "$TOOLS/report_test" --csv
    assert_line "report_test,effect pair,attempts,1,count"
    assert_line "report_test,machine at start,link_H2D,55,GB/s"
    assert_line "report_test,machine at end,sm_clock,1980,MHz"
    run "$TOOLS/report_test"
    refute_output --partial "measured 1 time"
    assert_output --partial "machine at start  link 55.0 GB/s H2D, 54.0 D2H; host memcpy 12.0 GB/s"
}

@test "attempts: re-measured on interference, the text says what was seen and that the last one held" {
    run "$TOOLS/report_test" --interfered
    assert_success
    assert_output --partial "effect pair: measured 3 times; attempt 1: the link ran at 31-55 GB/s H2D; attempt 2: the same; the last attempt showed the effect"
    assert_output --partial "between the two: the link ran at 30-55 GB/s H2D"
}

@test "attempts: still not observed, the interference leads the likely reasons, and JSON carries it" {
    run "$TOOLS/report_test" --interfered --not-observed
    assert_failure 4
    [ "$(grep -n 'likely reason for effect pair: the machine, not the lesson: attempt 1' <<<"$output" | cut -d: -f1)" \
      -lt "$(grep -n 'likely reason for effect: a made-up reason' <<<"$output" | cut -d: -f1)" ]
    assert_output --partial "likely reason for the run: the machine, not the lesson: the link ran at 30-55 GB/s H2D"
    "$TOOLS/report_test" --json --interfered --not-observed >"$BATS_TEST_TMPDIR/r.json" || true
    run python3 -c "import json, sys; d = json.load(open(sys.argv[1]))
i = d['interference'][0]
print(i['what'], i['attempts'], i['observed_after'], i['seen'][:9])" "$BATS_TEST_TMPDIR/r.json"
    assert_output "effect pair 3 False attempt 1"
}
