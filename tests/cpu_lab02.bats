#!/usr/bin/env bats
# lab02 and its exercise on the CPU side: their own options' ranges, checked
# before any GPU is touched, and the grader's options of ex02 and sol02.

load test_helper

@test "lab02 range-checks its copy sizes, naming the range" {
    run --separate-stderr ./lab02 --max-mib 0
    assert_failure 2
    assert_equal "$stderr" "lab02: --max-mib must be an integer from 1 to 1024 (got '0')"
    run --separate-stderr ./lab02 --max-mib 2048
    assert_failure 2
    run --separate-stderr ./lab02 --async-mib 0
    assert_failure 2
    assert_equal "$stderr" "lab02: --async-mib must be an integer from 1 to 1024 (got '0')"
}

@test "lab02 --help says what --quick does to the sweep" {
    run ./lab02 --help
    assert_success
    assert_output --partial "--max-mib"
    assert_output --partial "--async-mib"
    assert_output --regexp "--max-mib MIB .*default 256, --quick 64\\)"
    assert_output --regexp "--async-mib MIB .*default 64, --quick 16\\)"
}

@test "ex02 and sol02 range-check the chunks of their pipeline" {
    for p in $(programs | grep -xE 'ex02|sol02'); do
        run --separate-stderr "./$p" --chunks 1
        [ "$status" -eq 2 ] || fail "$p --chunks 1: exit $status, expected 2"
        assert_equal "$stderr" "$p: --chunks must be an integer from 2 to 64 (got '1')"
        run --separate-stderr "./$p" --chunk-mib 512
        [ "$status" -eq 2 ] || fail "$p --chunk-mib 512: exit $status, expected 2"
        assert_equal "$stderr" "$p: --chunk-mib must be an integer from 1 to 256 (got '512')"
    done
}

@test "ex02 and sol02 take the grader's --grade and --check beside the exercise's options" {
    for p in $(programs | grep -xE 'ex02|sol02'); do
        run "./$p" --help
        assert_success
        assert_output --regexp "--chunks N .*default 8\)"
        assert_output --regexp "--chunk-mib MIB .*default 16, --quick 8\)"
        assert_output --partial "--grade"
        assert_output --partial "--check"
    done
}
