#!/usr/bin/env bats
# lab09 and ex09 on the CPU side: their own options' ranges, the rule
# between K1 and K2, and the grader's options on ex09 and sol09.

load test_helper

@test "lab09's own numbers are range-checked" {
    run --separate-stderr ./lab09 --k1-ms 1
    assert_failure 2
    assert_equal "$stderr" "lab09: --k1-ms must be a number from 2 to 1000 (got '1')"
    run --separate-stderr ./lab09 --k2-ms 0
    assert_failure 2
    assert_equal "$stderr" "lab09: --k2-ms must be a number from 0.1 to 1 (got '0')"
    run --separate-stderr ./lab09 --size-kib 65537
    assert_failure 2
    assert_equal "$stderr" "lab09: --size-kib must be an integer from 4 to 65536 (got '65537')"
}

@test "lab09 refuses a K2 longer than half of K1 before touching a GPU" {
    run --separate-stderr ./lab09 --quick --k1-ms 2 --k2-ms 1
    assert_failure 2
    assert_equal "$stderr" "lab09: --k2-ms 1: K2 must be at most half of K1 (--k1-ms 2)"
}

@test "lab09 --help lists its options with their --quick values, and the exit codes" {
    run ./lab09 --help
    assert_success
    assert_output --regexp "--k1-ms MS .*default 20, --quick 2.5\)"
    assert_output --regexp "--k2-ms MS .*default 1, --quick 0.5\)"
    assert_output --regexp "--size-kib KIB .*default 1024, --quick 256\)"
    assert_output --partial "exit codes"
}

@test "lab09 --dry-run shows the settings without touching a GPU" {
    run ./lab09 --dry-run --quick --k1-ms 30
    assert_success
    assert_output --partial "--k1-ms 30"
    assert_output --partial "--k2-ms 0.5"
    assert_output --partial "--reps 2"
}

@test "ex09 and sol09 range-check their steps and take the grader's --grade and --check" {
    for p in $(programs | grep -xE 'ex09|sol09'); do
        run --separate-stderr "./$p" --steps 2
        assert_failure 2
        assert_equal "$stderr" "$p: --steps must be an integer from 3 to 1000 (got '2')"
        run "./$p" --help
        assert_success
        assert_output --regexp "--steps N .*default 40, --quick 10\)"
        assert_output --partial "--grade"
        assert_output --partial "--check"
    done
}
