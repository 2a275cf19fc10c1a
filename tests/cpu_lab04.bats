#!/usr/bin/env bats
# lab04 and its exercise on the CPU side: the pipeline's own options, checked
# before any GPU is touched.

load test_helper

# The lab04 programs this tree builds (solutions/ may be withheld).
lab04_programs() { programs | grep -xE 'lab04|ex04|sol04'; }

@test "lab04, ex04 and sol04 range-check their pipeline options, naming the range" {
    for p in $(lab04_programs); do
        run --separate-stderr "./$p" --batches 1
        [ "$status" -eq 2 ] || fail "$p --batches 1: exit $status, expected 2"
        assert_equal "$stderr" "$p: --batches must be an integer from 2 to 1024 (got '1')"
        run --separate-stderr "./$p" --batch-mib 0
        [ "$status" -eq 2 ] || fail "$p --batch-mib 0: exit $status, expected 2"
        assert_equal "$stderr" "$p: --batch-mib must be an integer from 1 to 1024 (got '0')"
        run --separate-stderr "./$p" --kernel-ratio 0
        [ "$status" -eq 2 ] || fail "$p --kernel-ratio 0: exit $status, expected 2"
        assert_equal "$stderr" "$p: --kernel-ratio must be a number from 0.05 to 20 (got '0')"
    done
}

@test "a pipeline larger than 8 GiB of input is a usage error before any GPU is touched" {
    for p in $(lab04_programs); do
        run --separate-stderr "./$p" --batches 1024 --batch-mib 16
        [ "$status" -eq 2 ] || fail "$p: exit $status, expected 2"
        assert_equal "$stderr" "$p: --batches 1024 x --batch-mib 16 is more than 8192 MiB of input"
    done
}

@test "only lab04 has --sweep; the exercise keeps to the double buffer" {
    run ./lab04 --help
    assert_success
    assert_output --partial "--sweep"
    for p in $(programs | grep -xE 'ex04|sol04'); do
        run --separate-stderr "./$p" --sweep
        [ "$status" -eq 2 ] || fail "$p --sweep: exit $status, expected 2"
    done
}
