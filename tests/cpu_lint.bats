#!/usr/bin/env bats
# make lint: cppcheck on every source and clang-tidy on the host C find
# nothing in the code, and do find the bugs they are run for.

load test_helper

lint_available() {
    command -v cppcheck >/dev/null && command -v clang-tidy >/dev/null
}

@test "make lint finds nothing: cppcheck on the C and CUDA files, clang-tidy on the host C" {
    lint_available || fail "make lint needs cppcheck and clang-tidy: sudo apt-get install cppcheck clang-tidy (make test installs them where it runs as root)"
    run make -s lint
    assert_success
    assert_line --regexp "^lint: cppcheck, [0-9]+ C files: clean$"
    assert_line --regexp "^lint: cppcheck, [0-9]+ CUDA files: clean$"
    assert_line --regexp "^lint: clang-tidy, [0-9]+ C files: clean$"
}

@test "make lint finds a leak, a va_list left open and an index past the end, and reads kernel launches" {
    lint_available || skip "cppcheck or clang-tidy missing: the test above says which"
    run env LINT_C=tests/fixtures/lint/bugs.c LINT_CU=tests/fixtures/lint/launch.cu \
        LINT_CFLAGS=-std=c99 tests/tools/lint.sh
    assert_failure 1
    # (by the checks' names, which stay when a new release rewords a message)
    assert_output --regexp "bugs.c:15: .*\[va_end_missing\]"
    assert_output --regexp "bugs.c:21: .*\[pointerSize\]"
    assert_output --regexp "bugs.c:32:.*\[clang-analyzer-unix.Malloc"
    assert_output --regexp "launch.cu:14: .*\[arrayIndexOutOfBounds\]"
    # the launch <<<(n + 255) / 256, 256>>> is a launch, not a shift by 256 bits
    refute_output --partial "shiftTooManyBits"
    assert_line "lint: cppcheck, 1 C files: findings above"
    assert_line "lint: cppcheck, 1 CUDA files: findings above"
    assert_line "lint: clang-tidy, 1 C files: findings above"
}

@test "make lint says which tool is missing and how to install it" {
    mkdir "$BATS_TEST_TMPDIR/bin"
    ln -s "$(command -v dirname)" "$BATS_TEST_TMPDIR/bin/dirname"
    run --separate-stderr env PATH="$BATS_TEST_TMPDIR/bin" /bin/bash tests/tools/lint.sh
    assert_failure 3
    assert_equal "$stderr" "make lint needs cppcheck clang-tidy: sudo apt-get install cppcheck clang-tidy"
}
