#!/usr/bin/env bats
# lab03 and its exercise on the CPU side: the kernel's duration option.

load test_helper

# The lab03 programs this tree builds (solutions/ may be withheld).
lab03_programs() { programs | grep -xE 'lab03|ex03|sol03'; }

@test "lab03, ex03 and sol03 range-check --kernel-ms, naming the range" {
    for p in $(lab03_programs); do
        run --separate-stderr "./$p" --kernel-ms 0.1
        [ "$status" -eq 2 ] || fail "$p --kernel-ms 0.1: exit $status, expected 2"
        assert_equal "$stderr" "$p: --kernel-ms must be a number from 0.5 to 1000 (got '0.1')"
        run --separate-stderr "./$p" --kernel-ms=1001
        [ "$status" -eq 2 ] || fail "$p --kernel-ms=1001: exit $status, expected 2"
    done
}

@test "--help says what --quick does to the kernel's duration" {
    for p in $(lab03_programs); do
        run "./$p" --help
        assert_success
        assert_output --partial "--kernel-ms MS"
        assert_output --regexp "\(0\.5 to 1000; default 5, --quick (1|2\.5)\)"
    done
}
