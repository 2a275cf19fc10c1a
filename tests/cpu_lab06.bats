#!/usr/bin/env bats
# lab06 and ex06 on the CPU side: their own options' ranges, and the
# grader's beside the exercise's.

load test_helper

@test "lab06's own numbers are range-checked" {
    run --separate-stderr ./lab06 --batches 3
    assert_failure 2
    assert_equal "$stderr" "lab06: --batches must be an integer from 4 to 64 (got '3')"
    run --separate-stderr ./lab06 --spin-ms 0.1
    assert_failure 2
    assert_equal "$stderr" "lab06: --spin-ms must be a number from 0.5 to 1000 (got '0.1')"
    run --separate-stderr ./lab06 --size-mib 2048
    assert_failure 2
    run --separate-stderr ./lab06 --strict=1
    assert_failure 2
}

@test "lab06 --help explains --strict and the exit codes" {
    run ./lab06 --help
    assert_success
    assert_output --partial "--strict"
    assert_output --partial "exit codes"
}

@test "ex06 and sol06 range-check their stage delay" {
    for p in $(programs | grep -xE 'ex06|sol06'); do
        run --separate-stderr "./$p" --spin-ms 200
        assert_failure 2
        assert_equal "$stderr" "$p: --spin-ms must be a number from 0.5 to 100 (got '200')"
    done
}

@test "ex06 and sol06 take the grader's --grade and --check beside the exercise's options" {
    for p in $(programs | grep -xE 'ex06|sol06'); do
        run "./$p" --help
        assert_success
        assert_output --regexp "--spin-ms MS .*default 2\)"
        assert_output --partial "--grade"
        assert_output --partial "--check"
    done
}
