#!/usr/bin/env bats
# lab04 and its exercise on the CPU side: the pipeline's own options, checked
# before any GPU is touched, and the grader's beside the exercise's.

load test_helper

# The lab04 programs this tree builds (solutions/ may be withheld).
lab04_programs() { programs | grep -xE 'lab04|ex04|sol04'; }

# range PROGRAM OPTION VALUE MESSAGE: PROGRAM OPTION VALUE is a usage error saying MESSAGE.
range() {
    run --separate-stderr "./$1" "$2" "$3"
    [ "$status" -eq 2 ] || fail "$1 $2 $3: exit $status, expected 2"
    assert_equal "$stderr" "$1: $2 must be $4 (got '$3')"
}

@test "lab04 range-checks its pipeline options, naming the range: at most 64 x 128 MiB, 8 GiB of input" {
    range lab04 --batches 1 "an integer from 2 to 64"
    range lab04 --batches 65 "an integer from 2 to 64"
    range lab04 --batch-mib 0 "an integer from 1 to 128"
    range lab04 --batch-mib 129 "an integer from 1 to 128"
    range lab04 --kernel-ratio 0 "a number from 0.05 to 20"
    run ./lab04 --batches 64 --batch-mib 128 --dry-run
    assert_success
}

@test "ex04 and sol04 range-check their pipeline options, and refuse more than 8 GiB of input" {
    for p in $(programs | grep -xE 'ex04|sol04'); do
        range "$p" --batches 1 "an integer from 2 to 1024"
        range "$p" --batch-mib 0 "an integer from 1 to 1024"
        range "$p" --kernel-ratio 0 "a number from 0.05 to 20"
        run --separate-stderr "./$p" --batches 1024 --batch-mib 16
        [ "$status" -eq 2 ] || fail "$p: exit $status, expected 2"
        assert_equal "$stderr" "$p: --batches 1024 x --batch-mib 16 is more than 8192 MiB of input"
    done
}

@test "ex04 and sol04 take the grader's --grade and --check beside the pipeline's options" {
    for p in $(programs | grep -xE 'ex04|sol04'); do
        run "./$p" --help
        assert_success
        assert_output --regexp "--batches N .*default 16, --quick 8\)"
        assert_output --regexp "--kernel-ratio R .*default 2\)"
        assert_output --partial "--grade"
        assert_output --partial "--check"
    done
}

@test "the compute/copy sweep is lab04 run at several --kernel-ratio values, not an option" {
    run ./lab04 --help
    assert_output --partial "--kernel-ratio R"
    for p in $(lab04_programs); do
        run --separate-stderr "./$p" --sweep
        [ "$status" -eq 2 ] || fail "$p --sweep: exit $status, expected 2"
    done
    grep -q 'SWEEP_RATIOS="0.125 0.25 0.5 1 2 4 8"' plots/results.sh
}
