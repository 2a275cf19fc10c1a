#!/usr/bin/env bats
# lab08 and ex08 on the CPU side: their own options' ranges, --no-wait, and
# --dry-run, which must answer without touching a GPU.

load test_helper

@test "lab08's own numbers are range-checked" {
    run --separate-stderr ./lab08 --batches 1
    assert_failure 2
    assert_equal "$stderr" "lab08: --batches must be an integer from 2 to 256 (got '1')"
    run --separate-stderr ./lab08 --stage-ms 0.1
    assert_failure 2
    assert_equal "$stderr" "lab08: --stage-ms must be a number from 0.2 to 20 (got '0.1')"
    run --separate-stderr ./lab08 --wait-ms 2000
    assert_failure 2
    assert_equal "$stderr" "lab08: --wait-ms must be a number from 1 to 1000 (got '2000')"
    run --separate-stderr ./lab08 --no-wait=1
    assert_failure 2
}

@test "lab08 --help names --no-wait and the --quick values, and lists the exit codes" {
    run ./lab08 --help
    assert_success
    assert_output --partial "--no-wait"
    assert_output --partial "cudaStreamWaitEvent"
    assert_output --regexp "--batches N .*default 16, --quick 6\)"
    assert_output --regexp "--stage-ms MS .*default 1, --quick 0.5\)"
    assert_output --partial "exit codes"
}

@test "lab08 --dry-run shows what was typed and the --quick values without touching a GPU" {
    run ./lab08 --dry-run --quick --no-wait --batches 8
    assert_success
    assert_output --partial "--batches 8"
    assert_output --partial "--stage-ms 0.5"
    assert_output --partial "--wait-ms 5"
    assert_output --partial "--no-wait on"
}

@test "ex08 and sol08 take --batches, --grade and --check, and range-check --batches" {
    for p in $(programs | grep -xE 'ex08|sol08'); do
        run ./$p --help
        assert_success
        assert_output --partial "--grade"
        assert_output --partial "--check"
        assert_output --regexp "--batches N .*default 12, --quick 6\)"
        run --separate-stderr ./$p --batches 300
        assert_failure 2
        assert_equal "$stderr" "$p: --batches must be an integer from 2 to 256 (got '300')"
    done
}
