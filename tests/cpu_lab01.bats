#!/usr/bin/env bats
# lab01 and its exercise on the CPU side: the second build's name, and the
# kernels' duration options.

load test_helper

@test "the per-thread build of lab01 names itself lab01_ptds" {
    run ./lab01_ptds --help
    assert_success
    assert_line --index 0 "usage: lab01_ptds [options]"
    run ./lab01 --help
    assert_line --index 0 "usage: lab01 [options]"
}

@test "lab01 and lab01_ptds range-check --first-ms and --second-ms, naming the range" {
    for p in lab01 lab01_ptds; do
        for o in --first-ms --second-ms; do
            run --separate-stderr "./$p" "$o" 0.5
            [ "$status" -eq 2 ] || fail "$p $o 0.5: exit $status, expected 2"
            assert_equal "$stderr" "$p: $o must be a number from 1 to 1000 (got '0.5')"
            run --separate-stderr "./$p" "$o=1001"
            [ "$status" -eq 2 ] || fail "$p $o=1001: exit $status, expected 2"
        done
    done
}

@test "ex01 and sol01 range-check --kernel-ms and say what --quick does to it" {
    for p in $(programs | grep -xE 'ex01|sol01'); do
        run --separate-stderr "./$p" --kernel-ms 0
        [ "$status" -eq 2 ] || fail "$p --kernel-ms 0: exit $status, expected 2"
        assert_equal "$stderr" "$p: --kernel-ms must be a number from 1 to 1000 (got '0')"
        run "./$p" --help
        assert_output --partial "(1 to 1000; default 20, --quick 5)"
    done
}
