#!/usr/bin/env bats
# lab10 and ex10 on the CPU side: their own options' ranges, --free, and
# --dry-run, which must answer without touching a GPU.

load test_helper

@test "lab10's own numbers are range-checked, and --free takes all, safe or unsafe" {
    run --separate-stderr ./lab10 --iterations 5
    assert_failure 2
    assert_equal "$stderr" "lab10: --iterations must be an integer from 10 to 1000 (got '5')"
    run --separate-stderr ./lab10 --delay-ms 0.1
    assert_failure 2
    assert_equal "$stderr" "lab10: --delay-ms must be a number from 0.5 to 100 (got '0.1')"
    run --separate-stderr ./lab10 --big-mib 1
    assert_failure 2
    assert_equal "$stderr" "lab10: --big-mib must be an integer from 2 to 1024 (got '1')"
    run --separate-stderr ./lab10 --free sometimes
    assert_failure 2
    assert_equal "$stderr" "lab10: --free must be all, safe or unsafe (got 'sometimes')"
}

@test "lab10 --help names --free and the --quick values, and lists the exit codes" {
    run ./lab10 --help
    assert_success
    assert_output --regexp "--free WAYS .*unsafe"
    assert_output --regexp "--size-mib MIB .*default 16, --quick 4\)"
    assert_output --regexp "--iterations N .*default 100, --quick 20\)"
    assert_output --partial "exit codes"
}

@test "lab10 --dry-run shows what was typed and the --quick values without touching a GPU" {
    run ./lab10 --dry-run --quick --free unsafe --delay-ms 3
    assert_success
    assert_output --partial "--free unsafe"
    assert_output --partial "--delay-ms 3"
    assert_output --partial "--b-ms 0.5"
    assert_output --partial "--iterations 20"
}

@test "make sanitize runs lab10's safe frees only, memcheck tracking stream-ordered races" {
    run tests/tools/sanitize.sh --arguments lab10
    assert_success
    assert_output --regexp " --free safe$"
    grep -q -- "--track-stream-ordered-races all" tests/tools/sanitize.sh ||
        fail "sanitize.sh's memcheck does not track stream-ordered races"
    grep -q -- '"--track-stream-ordered-races", "all"' grader/runner.py ||
        fail "the grader's memcheck does not track stream-ordered races"
}

@test "ex10 and sol10 take --runs, --grade and --check, and range-check --runs" {
    for p in $(programs | grep -xE 'ex10|sol10'); do
        run ./$p --help
        assert_success
        assert_output --partial "--grade"
        assert_output --partial "--check"
        assert_output --regexp "--runs N .*default 10, --quick 4\)"
        run --separate-stderr ./$p --runs 1
        assert_failure 2
        assert_equal "$stderr" "$p: --runs must be an integer from 2 to 1000 (got '1')"
    done
}
