#!/usr/bin/env bats
# lab05's own options, checked before any GPU is touched, and the grader's
# options of ex05 and sol05.

load test_helper

@test "lab05, ex05 and sol05 range-check their own options" {
    for p in $(programs | grep -xE 'lab05|ex05|sol05'); do
        run --separate-stderr "./$p" --block-us 5
        assert_failure 2
        assert_equal "$stderr" "$p: --block-us must be a number from 20 to 10000 (got '5')"
        run --separate-stderr "./$p" --waves 1001
        assert_failure 2
        assert_equal "$stderr" "$p: --waves must be an integer from 10 to 1000 (got '1001')"
    done
    run --separate-stderr ./lab05 --copy-mib 8
    assert_failure 2
    assert_equal "$stderr" "lab05: --copy-mib must be an integer from 16 to 4096 (got '8')"
}

@test "ex05 and sol05 take the grader's --grade and --check beside the background's options" {
    for p in $(programs | grep -xE 'ex05|sol05'); do
        run "./$p" --help
        assert_success
        assert_output --regexp "--waves N .*default 50, --quick 20\)"
        assert_output --partial "--grade"
        assert_output --partial "--check"
    done
}
