#!/usr/bin/env bats
# The build: every program from a clean tree, warning-free; the targets people use.

load test_helper

@test "make builds every lab, exercise and solution from a clean tree without a warning" {
    run make -j2 BUILD="$BATS_TEST_TMPDIR/build" BINDIR="$BATS_TEST_TMPDIR/bin" all
    assert_success
    refute_output --partial "warning"
    for p in $(programs); do
        [ -x "$BATS_TEST_TMPDIR/bin/$p" ] || fail "make all did not build $p"
    done
}

@test "make help lists the targets with one line each" {
    run make -s help
    assert_success
    for target in "make labNN" "make test" "make clean" "make list"; do
        assert_output --partial "$target"
    done
}

@test "make ARCH=sm_86 builds for that GPU only" {
    run make -n ARCH=sm_86 BUILD="$BATS_TEST_TMPDIR/b" BINDIR="$BATS_TEST_TMPDIR/bin" lab00
    assert_success
    assert_output --partial "-arch=sm_86"
    refute_output --partial "compute_75"
}

@test "without a GPU the build is portable: sm_75 and newer, with PTX for newer chips" {
    run make -n CI=true BUILD="$BATS_TEST_TMPDIR/b" BINDIR="$BATS_TEST_TMPDIR/bin" lab00
    assert_success
    assert_output --partial "code=sm_75"
    assert_output --partial "code=sm_90"
    assert_output --partial "arch=compute_75,code=compute_75"
}

@test "binaries land at the top level and are ignored by git" {
    [ -x ./lab00 ]
    git check-ignore -q lab00
    git check-ignore -q build/libstreamlab.a
}

@test "without CUPTI the programs still build, and link no CUPTI (--trace then says it is unavailable)" {
    run make -j2 CUPTI_LIBDIR= BUILD="$BATS_TEST_TMPDIR/build" BINDIR="$BATS_TEST_TMPDIR/bin" lab00
    assert_success
    refute_output --partial "warning"
    refute_output --partial "STREAMLAB_CUPTI"
    run bash -c "ldd '$BATS_TEST_TMPDIR/bin/lab00' | grep cupti"
    assert_failure
}
