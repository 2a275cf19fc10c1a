#!/usr/bin/env bats
# lab11 and ex11 on the CPU side: their own options' ranges, --no-wait, and
# --dry-run, which must answer without touching a GPU.

load test_helper

@test "lab11's own numbers are range-checked" {
    run --separate-stderr ./lab11 --batches 7
    assert_failure 2
    assert_equal "$stderr" "lab11: --batches must be an integer from 8 to 1024 (got '7')"
    run --separate-stderr ./lab11 --prep-ms 0.1
    assert_failure 2
    assert_equal "$stderr" "lab11: --prep-ms must be a number from 0.5 to 100 (got '0.1')"
    run --separate-stderr ./lab11 --step-ms 200
    assert_failure 2
    assert_equal "$stderr" "lab11: --step-ms must be a number from 0.2 to 100 (got '200')"
    run --separate-stderr ./lab11 --batch-mib 0
    assert_failure 2
    run --separate-stderr ./lab11 --no-wait=1
    assert_failure 2
}

@test "lab11 --help names --no-wait and the --quick values, and lists the exit codes" {
    run ./lab11 --help
    assert_success
    assert_output --partial "--no-wait"
    assert_output --regexp "--batches N .*default 32, --quick 16\)"
    assert_output --regexp "--prep-ms MS .*default 4, --quick 2\)"
    assert_output --regexp "--step-ms MS .*default 2, --quick 1\)"
    assert_output --partial "exit codes"
}

@test "lab11 --dry-run shows what was typed and the --quick values without touching a GPU" {
    run ./lab11 --dry-run --quick --no-wait --batches 24
    assert_success
    assert_output --partial "--batches 24"
    assert_output --partial "--prep-ms 2"
    assert_output --partial "--step-ms 1"
    assert_output --partial "--no-wait on"
}

@test "ex11 and sol11 take --batches, --producers, --grade and --check, and range-check them" {
    for p in $(programs | grep -xE 'ex11|sol11'); do
        run ./$p --help
        assert_success
        assert_output --partial "--grade"
        assert_output --partial "--check"
        assert_output --regexp "--batches N .*default 32, --quick 16\)"
        assert_output --regexp "--producers W .*default 4\)"
        run --separate-stderr ./$p --producers 11
        assert_failure 2
        assert_equal "$stderr" "$p: --producers must be an integer from 1 to 10 (got '11')"
        run --separate-stderr ./$p --batches 11
        assert_failure 2
        assert_equal "$stderr" "$p: --batches must be an integer from 12 to 1024 (got '11')"
    done
}
