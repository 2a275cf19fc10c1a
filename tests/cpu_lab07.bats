#!/usr/bin/env bats
# lab07 on the CPU side: its own options' ranges, and --connections, which
# must be read before the GPU is touched.

load test_helper

@test "lab07's own numbers are range-checked" {
    run --separate-stderr ./lab07 --kernel-ms 0.1
    assert_failure 2
    assert_equal "$stderr" "lab07: --kernel-ms must be a number from 0.5 to 100 (got '0.1')"
    run --separate-stderr ./lab07 --streams 1
    assert_failure 2
    assert_equal "$stderr" "lab07: --streams must be an integer from 2 to 128 (got '1')"
    run --separate-stderr ./lab07 --connections 0
    assert_failure 2
    assert_equal "$stderr" "lab07: --connections must be an integer from 1 to 32 (got '0')"
    run --separate-stderr ./lab07 --connections 33
    assert_failure 2
    assert_equal "$stderr" "lab07: --connections must be an integer from 1 to 32 (got '33')"
}

@test "lab07 --help says what --connections sets, and lists the exit codes" {
    run ./lab07 --help
    assert_success
    assert_output --partial "--connections C"
    assert_output --partial "CUDA_DEVICE_MAX_CONNECTIONS"
    assert_output --regexp "--kernel-ms MS .*default 2, --quick 1\)"
    assert_output --partial "exit codes"
}

@test "lab07 --dry-run shows the connections asked for without touching a GPU" {
    run ./lab07 --dry-run --connections 4 --streams 32
    assert_success
    assert_output --partial "--connections 4"
    assert_output --partial "--streams 32"
}

@test "ex07's own numbers are range-checked, and --help lists the grader's options" {
    run --separate-stderr ./ex07 --request-ms 0.1
    assert_failure 2
    assert_equal "$stderr" "ex07: --request-ms must be a number from 0.2 to 100 (got '0.1')"
    run ./ex07 --help
    assert_success
    assert_output --partial "--grade"
    assert_output --partial "--check"
    assert_output --regexp "--request-ms MS .*default 1, --quick 0.5\)"
}
