#!/usr/bin/env bats
# make sanitize on a real GPU: first the canary (a program with the bugs the
# sanitizers exist for) shows that a finding fails the run and a clean program
# passes; then every program, clean under memcheck (with leak checking),
# initcheck and synccheck. The logs stay in build/sanitize/.

load test_helper

setup() {
    require_gpu
    command -v compute-sanitizer >/dev/null || [ -x "${CUDA_HOME:-/usr/local/cuda}/bin/compute-sanitizer" ] ||
        skip "compute-sanitizer is not installed (it comes with the CUDA toolkit)"
}

# canary TOOL BUG: the sanitize script's run of the canary with BUG under TOOL.
canary() {
    run env SANITIZE_TOOLS="$1" SANITIZE_ARGS="$2" SANITIZE_LOGS="$BATS_TEST_TMPDIR/logs" \
        tests/tools/sanitize.sh "$TOOLS/sanitize_canary"
}

@test "canary: the clean program passes every tool" {
    canary "memcheck initcheck synccheck" ""
    assert_success
    assert_output --partial "sanitize: 3 clean, 0 failed"
}

@test "canary: memcheck's finding fails the run: a write past the end of a buffer" {
    canary memcheck oob
    assert_failure 1
    assert_line --regexp "sanitize_canary +memcheck +FAIL .*Invalid __global__ write"
}

@test "canary: memcheck's leak check fails the run: a buffer never freed" {
    canary memcheck leak
    assert_failure 1
    assert_line --regexp "sanitize_canary +memcheck +FAIL .*Leaked [0-9,]+ bytes"
}

@test "canary: initcheck's finding fails the run: a read of memory nothing wrote" {
    canary initcheck uninit
    assert_failure 1
    assert_line --regexp "sanitize_canary +initcheck +FAIL .*Uninitialized __global__ memory read"
}

@test "make sanitize: every lab and solution is clean under memcheck, initcheck and synccheck" {
    run make -s sanitize
    echo "$output" # every line, in the test's report when it fails
    assert_success
    assert_output --regexp "sanitize: [0-9]+ clean, 0 failed"
}

@test "lab13 under memcheck: no memory error, leak or race; NCCL's kernel probes not counted" {
    export NCCL_NVLS_ENABLE=0
    run env SANITIZE_TOOLS=memcheck SANITIZE_LOGS="$BATS_TEST_TMPDIR/logs" tests/tools/sanitize.sh lab13
    echo "$output"
    # on one GPU lab13 exits 3 (needs 2 GPUs): the run is "skip", and the script's
    # exit 3 (nothing ran to the end); its log must still hold no finding
    [ "$status" -eq 0 ] || [ "$status" -eq 3 ] || fail "exit $status"
    assert_line --regexp "^lab13 +memcheck +(ok|skip) "
    assert_line --regexp "^sanitize: [01] clean, 0 failed"
    grep -q -- "--report-api-errors no" "$BATS_TEST_TMPDIR/logs/lab13.memcheck.log"
}
