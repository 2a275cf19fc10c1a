#!/usr/bin/env bats
# lab03 and its exercise on the CPU side: the kernel's duration option, which
# the exercise does not have.

load test_helper

@test "lab03 range-checks --kernel-ms, naming the range" {
    run --separate-stderr ./lab03 --kernel-ms 0.1
    assert_failure 2
    assert_equal "$stderr" "lab03: --kernel-ms must be a number from 0.5 to 1000 (got '0.1')"
    run --separate-stderr ./lab03 --kernel-ms=1001
    assert_failure 2
}

@test "--help says what --quick does to the kernel's duration" {
    run ./lab03 --help
    assert_success
    assert_output --partial "--kernel-ms MS"
    assert_output --partial "(0.5 to 1000; default 5, --quick 2.5)"
}

@test "ex03 and sol03 take no duration: the program draws them, so the student's code cannot know them" {
    for p in $(programs | grep -xE 'ex03|sol03'); do
        run --separate-stderr "./$p" --kernel-ms 2
        [ "$status" -eq 2 ] || fail "$p --kernel-ms 2: exit $status, expected 2"
        assert_equal "$stderr" "$p: unknown option '--kernel-ms' (see --help)"
    done
}
