#!/usr/bin/env bats
# lab12 and ex12 on the CPU side: their own options' ranges, --help and
# --dry-run, which must answer without touching a GPU.

load test_helper

@test "lab12's own numbers are range-checked" {
    run --separate-stderr ./lab12 --kernels 5
    assert_failure 2
    assert_equal "$stderr" "lab12: --kernels must be an integer from 10 to 100000 (got '5')"
    run --separate-stderr ./lab12 --branch-kernels 1
    assert_failure 2
    assert_equal "$stderr" "lab12: --branch-kernels must be an integer from 2 to 5000 (got '1')"
    run --separate-stderr ./lab12 --kernel-us 1
    assert_failure 2
    assert_equal "$stderr" "lab12: --kernel-us must be a number from 2 to 1000 (got '1')"
}

@test "lab12 --help names its three parts' options and the --quick values, and lists the exit codes" {
    run ./lab12 --help
    assert_success
    assert_output --regexp "--kernels N .*default 1000, --quick 200\)"
    assert_output --regexp "--branch-kernels K .*default 250, --quick 50\)"
    assert_output --regexp "--kernel-us US .*default 10\)"
    assert_output --partial "exit codes"
}

@test "lab12 --dry-run shows what was typed and the --quick values without touching a GPU" {
    run ./lab12 --dry-run --quick --kernel-us 20 --skip-setters
    assert_success
    assert_output --partial "--skip-setters on"
    assert_output --partial "--kernels 200"
    assert_output --partial "--branch-kernels 50"
    assert_output --partial "--kernel-us 20"
}

@test "ex12 and sol12 take --batches, --steps, --grade and --check, and range-check them" {
    for p in $(programs | grep -xE 'ex12|sol12'); do
        run ./$p --help
        assert_success
        assert_output --partial "--grade"
        assert_output --partial "--check"
        assert_output --regexp "--batches N .*default 8, --quick 4\)"
        assert_output --regexp "--steps N .*default 40, --quick 10\)"
        run --separate-stderr ./$p --batches 65
        assert_failure 2
        assert_equal "$stderr" "$p: --batches must be an integer from 2 to 64 (got '65')"
        run --separate-stderr ./$p --steps 1
        assert_failure 2
        assert_equal "$stderr" "$p: --steps must be an integer from 2 to 1000 (got '1')"
    done
}
