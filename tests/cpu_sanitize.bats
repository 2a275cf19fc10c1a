#!/usr/bin/env bats
# make sanitize without a GPU: how it judges a sanitizer's log (on logs in
# compute-sanitizer's format, tests/fixtures/sanitize/), what each program
# runs with, and what it says where it cannot run. tests/gpu_sanitize.bats
# runs it for real.

load test_helper

LOGS="$ROOT/tests/fixtures/sanitize"

# judge LOG PROGRAM TOOL STATUS: the script's verdict on one run.
judge() { run tests/tools/sanitize.sh --judge "$LOGS/$1" "$2" "$3" "$4"; }

@test "a clean log passes, whether the lab saw its effect (exit 0) or not (exit 4)" {
    judge clean.log lab00 memcheck 0
    assert_success
    assert_output --regexp "^ok"
    judge clean.log lab00 memcheck 4
    assert_success
}

@test "an out-of-bounds write fails, named by the sanitizer's own words" {
    judge oob.log sanitize_canary memcheck 1
    assert_failure
    assert_output --regexp "^FAIL"
    assert_output --partial "2 findings: Invalid __global__ write of size 4 bytes"
}

@test "a leak fails, even though the program itself exits 0" {
    judge leak.log sanitize_canary memcheck 0
    assert_failure
    assert_output --partial "Leaked 4000 bytes"
}

@test "a declared finding passes for the program that declares it, and only for it" {
    judge not-ready.log lab03 memcheck 0
    assert_success
    assert_output --partial "1 declared finding only"
    judge not-ready.log lab04 memcheck 0
    assert_failure
    assert_output --partial "Program hit cudaErrorNotReady"
}

@test "a finding printed in the middle of the program's own line is still read (a recorded H200 log)" {
    judge lab03-h200.log lab03 memcheck 4
    assert_success
    assert_output --partial "3 declared findings only"
    judge lab03-h200.log lab04 memcheck 4
    assert_failure
    assert_output --partial "3 findings: Program hit cudaErrorNotReady"
}

@test "a run that timed out or never printed its summary fails, saying which" {
    judge unfinished.log lab00 initcheck 124
    assert_failure
    assert_output --partial "timed out"
    judge unfinished.log lab00 initcheck 0
    assert_failure
    assert_output --partial "no ERROR SUMMARY"
}

@test "a clean sanitizer with wrong results, a usage error or a crash fails" {
    judge wrong.log lab05 synccheck 1
    assert_failure
    assert_output --partial "results wrong: [FAIL] critical_verified"
    judge clean.log lab00 memcheck 2
    assert_failure
    assert_output --partial "usage error"
    judge clean.log lab00 memcheck 139
    assert_failure
    assert_output --partial "status 139"
}

@test "every program runs --quick --reps 2 with its own numbers at their smallest" {
    run tests/tools/sanitize.sh --arguments lab00
    assert_output "--quick --reps 2 --retries 0 --size-mib 1 --spin-ms 0.1"
    for p in $(programs); do
        run tests/tools/sanitize.sh --arguments "$p"
        [[ "$output" == "--quick --reps 2"* ]] || fail "$p: $output"
    done
}

@test "every program's option parser accepts the arguments it gets under the sanitizer" {
    require_no_gpu # here each stops at the GPU it lacks (3), not at its options (2)
    for p in $(programs); do
        run --separate-stderr "./$p" $(tests/tools/sanitize.sh --arguments "$p")
        [ "$status" -eq 3 ] || fail "$p $(tests/tools/sanitize.sh --arguments "$p"): exit $status: $stderr"
    done
}

@test "make sanitize says what is missing where compute-sanitizer is not installed" {
    run --separate-stderr env SANITIZER=/nonexistent/compute-sanitizer tests/tools/sanitize.sh lab00
    assert_failure 3
    [[ "$stderr" == *"needs compute-sanitizer"* ]] || fail "$stderr"
}

@test "make sanitize prints one line per program and tool, a summary, and fails on one finding" {
    # a stand-in for compute-sanitizer: runs the program; initcheck "finds" something
    cat >"$BATS_TEST_TMPDIR/sanitizer" <<'SH'
#!/bin/sh
echo "========= COMPUTE-SANITIZER"
tool=$2
while [ "${1#--}" != "$1" ]; do shift 2; done
"$@"; status=$?
if [ "$tool" = initcheck ]; then
    echo "========= Uninitialized __global__ memory read of size 4 bytes"
    echo "=========     at kernel+0x10 in x.cu:1"
    echo "========= ERROR SUMMARY: 1 error"
else
    echo "========= ERROR SUMMARY: 0 errors"
fi
exit $status
SH
    chmod +x "$BATS_TEST_TMPDIR/sanitizer"
    # --help: every program runs to the end without a GPU
    run env SANITIZER="$BATS_TEST_TMPDIR/sanitizer" GPU_PROBE=/bin/true SANITIZE_ARGS=--help \
        SANITIZE_LOGS="$BATS_TEST_TMPDIR/logs" SANITIZE_JOBS=3 tests/tools/sanitize.sh lab00 ex04
    assert_failure 1
    assert_line --regexp "^lab00 +memcheck +ok "
    assert_line --regexp "^lab00 +synccheck +ok "
    assert_line --regexp "^ex04 +initcheck +FAIL .*1 finding: Uninitialized __global__ memory read"
    assert_line --regexp "^sanitize: 4 clean, 2 failed, 0 skipped in [0-9]+ s$"
    grep -q "usage: lab00" "$BATS_TEST_TMPDIR/logs/lab00.memcheck.log" ||
        fail "the log does not hold the program's output"
}

@test "NCCL's programs run with failed API calls unreported (NCCL's kernel probes), and no other program does" {
    cat >"$BATS_TEST_TMPDIR/sanitizer" <<'SH'
#!/bin/sh
echo "========= COMPUTE-SANITIZER"
while [ "${1#--}" != "$1" ]; do shift 2; done
"$@"; status=$?
echo "========= ERROR SUMMARY: 0 errors"
exit $status
SH
    chmod +x "$BATS_TEST_TMPDIR/sanitizer"
    run env SANITIZER="$BATS_TEST_TMPDIR/sanitizer" GPU_PROBE=/bin/true SANITIZE_ARGS=--help \
        SANITIZE_TOOLS="memcheck synccheck" SANITIZE_LOGS="$BATS_TEST_TMPDIR/logs" \
        tests/tools/sanitize.sh lab00 lab13
    assert_success
    for tool in memcheck synccheck; do
        head -1 "$BATS_TEST_TMPDIR/logs/lab13.$tool.log" | grep -q -- "--report-api-errors no" ||
            fail "lab13 under $tool: $(head -1 "$BATS_TEST_TMPDIR/logs/lab13.$tool.log")"
        ! grep -q -- "--report-api-errors" "$BATS_TEST_TMPDIR/logs/lab00.$tool.log" ||
            fail "lab00 under $tool runs with --report-api-errors"
    done
}
