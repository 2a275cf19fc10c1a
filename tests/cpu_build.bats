#!/usr/bin/env bats
# The build: every program from a clean tree, warning-free; the targets people use.

load test_helper

@test "make builds every lab, exercise and solution from a clean tree without a warning" {
    # Under make test on a clean tree, tests/run.sh has just made this build
    # (all and the test tools): its log is judged, and its programs, instead
    # of minutes spent building everything again. Run alone, this builds.
    local bin="$BATS_TEST_TMPDIR/bin"
    if [ -n "${STREAMLAB_CLEAN_BUILD_LOG:-}" ]; then
        output=$(cat "$STREAMLAB_CLEAN_BUILD_LOG") bin=.
    else
        run make -j2 BUILD="$BATS_TEST_TMPDIR/build" BINDIR="$bin" all
        assert_success
    fi
    refute_output --partial "warning"
    # Without a GPU (or with CI=true) the build is portable, and says so.
    if [ "${CI:-}" = true ] || ! "$(dirname "$(command -v nvcc)")/__nvcc_device_query" >/dev/null 2>&1; then
        assert_output --partial "so this is the portable build"
    fi
    for p in $(programs); do
        [ -x "$bin/$p" ] || fail "make all did not build $p"
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

@test "make ARCH takes sm_NN, sm_NNa and sm_NNf, as nvcc's -arch does" {
    for arch in sm_90 sm_90a sm_100f; do
        run make -n ARCH="$arch" BUILD="$BATS_TEST_TMPDIR/b" BINDIR="$BATS_TEST_TMPDIR/bin" lab00
        assert_success
        assert_output --partial "-arch=$arch "
    done
}

@test "make ARCH=86 and other malformed values stop with one line naming the accepted forms, before nvcc compiles" {
    # 86, sm86, compute_90: near misses (the line suggests sm_86, sm_90);
    # sm_35: dropped by CUDA 13; sm_86a: no arch-specific variant for 8.6.
    for arch in 86 sm86 compute_90 sm_35 sm_86a "sm_90 sm_80" native; do
        # --no-print-directory: under `make test` this make is a sub-make, which
        # would frame its one line with "Entering directory" lines
        run make --no-print-directory ARCH="$arch" BUILD="$BATS_TEST_TMPDIR/b" \
            BINDIR="$BATS_TEST_TMPDIR/bin" lab00
        assert_failure
        [ "${#lines[@]}" -eq 1 ] || fail "ARCH=$arch: more than one line: $output"
        assert_output --partial "ARCH=$arch is not a GPU architecture this build takes"
        assert_output --partial "use sm_NN (sm_86 for compute capability 8.6), or sm_NNa / sm_NNf"
        refute_output --partial "nvcc fatal"
        [ ! -e "$BATS_TEST_TMPDIR/b/kernels" ] || fail "ARCH=$arch: something was compiled"
    done
    run make ARCH=86 BUILD="$BATS_TEST_TMPDIR/b" lab00
    assert_output --partial "(did you mean ARCH=sm_86?)"
    run make ARCH=compute_90 BUILD="$BATS_TEST_TMPDIR/b" lab00
    assert_output --partial "(did you mean ARCH=sm_90?)"
}

@test "a portable build says why it is portable, once, and a build for one GPU does not" {
    run make -n CI=true BUILD="$BATS_TEST_TMPDIR/b" BINDIR="$BATS_TEST_TMPDIR/bin" lab00
    assert_success
    assert_output --partial "CI=true, so this is the portable build (sm_75 sm_80 sm_90 sm_100 sm_120, PTX for newer GPUs); make ARCH=sm_NN builds for one GPU"
    [ "$(grep -c 'portable build' <<<"$output")" -eq 1 ] || fail "said more than once: $output"
    run make -n ARCH=sm_90 BUILD="$BATS_TEST_TMPDIR/b" BINDIR="$BATS_TEST_TMPDIR/bin" lab00
    refute_output --partial "portable build"
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
    # a tree unpacked from `git archive` (the students' copy) is no repository
    git rev-parse --git-dir >/dev/null 2>&1 || skip "not a git checkout: nothing to ignore"
    git check-ignore -q lab00
    git check-ignore -q build/libstreamlab.a
}

@test "without CUPTI the programs still build, and link no CUPTI (--trace then says it is unavailable)" {
    # (for one GPU architecture, as one_arch: linking CUPTI or not is host code)
    run make -j2 ARCH=sm_90 CUPTI_LIBDIR= BUILD="$BATS_TEST_TMPDIR/build" BINDIR="$BATS_TEST_TMPDIR/bin" lab00
    assert_success
    refute_output --partial "warning"
    refute_output --partial "STREAMLAB_CUPTI"
    run bash -c "ldd '$BATS_TEST_TMPDIR/bin/lab00' | grep cupti"
    assert_failure
}

@test "make ex01 compiles the given program and the student's file as two objects, checks both, and links them" {
    run make -n BUILD="$BATS_TEST_TMPDIR/b" BINDIR="$BATS_TEST_TMPDIR/bin" ex01
    assert_success
    assert_output --partial "-c -o $BATS_TEST_TMPDIR/b/ex01/ex01.o exercises/given/ex01.cu"
    assert_output --partial "grader/checks.py includes exercises/ex01_default_stream.cu --"
    assert_output --partial "-c -o $BATS_TEST_TMPDIR/b/ex01/exercises/ex01_default_stream.o exercises/ex01_default_stream.cu"
    assert_output --partial "grader/checks.py symbols --source exercises/ex01_default_stream.cu"
    assert_output --regexp "-o $BATS_TEST_TMPDIR/bin/ex01 $BATS_TEST_TMPDIR/b/ex01/ex01.o $BATS_TEST_TMPDIR/b/ex01/exercises/ex01_default_stream.o $BATS_TEST_TMPDIR/b/given/grading.o"
    refute_output --partial "-rdc"
    [ -d solutions ] || return 0 # withheld: no sol01 to build
    run make -n BUILD="$BATS_TEST_TMPDIR/b" BINDIR="$BATS_TEST_TMPDIR/bin" sol01
    assert_output --partial "-c -o $BATS_TEST_TMPDIR/b/ex01/solutions/ex01_default_stream.o solutions/ex01_default_stream.cu"
}

# refused CASE: builds ex01 around tests/fixtures/refused/CASE/ (in build/, as
# make test leaves it); make must fail, and stderr holds the reason.
refused() {
    run --separate-stderr make -s BINDIR="$BATS_TEST_TMPDIR/bin" \
        EX_SRCS="tests/fixtures/refused/$1/ex01_default_stream.cu" ex01
    assert_failure
    [ ! -e "$BATS_TEST_TMPDIR/bin/ex01" ] || fail "make linked ex01 around $1"
}

@test "make refuses a student's file that includes a file from elsewhere, naming it and quoting none of it" {
    refused includes-rubric
    [[ "$stderr" == *"ex01_default_stream.cu includes grader/rubrics/ex01.ini, outside its own folder, exercises/given/, common/, kernels/"* ]] ||
        fail "stderr: $stderr"
    [[ "$stderr" != *"two streams"* && "$stderr" != *"preprocessing directive"* ]] ||
        fail "the rubric's text reached the message: $stderr"
    refused includes-solution
    if [ -d solutions ]; then
        [[ "$stderr" == *"includes solutions/ex01_default_stream.cu, outside its own folder"* ]] || fail "stderr: $stderr"
    else
        [[ "$stderr" == *"solutions/ex01_default_stream.cu: No such file"* ]] || fail "stderr: $stderr"
    fi
}

@test "make refuses a student's file that defines a symbol the program links from common/ or the C library, naming both" {
    refused defines-common
    [[ "$stderr" == *"defines-common/ex01_default_stream.cu defines stats_of, which common/stats.c defines: make it static or rename it"* ]] ||
        fail "stderr: $stderr"
    refused defines-libc
    [[ "$stderr" == *"defines clock_gettime, which libc.so.6 defines"* ]] || fail "stderr: $stderr"
}

@test "make refuses a student's file with a main() of its own, or code that runs before main" {
    refused defines-main
    [[ "$stderr" == *"defines main(): the given program (exercises/given/) has the main; remove yours"* ]] ||
        fail "stderr: $stderr"
    refused runs-before-main
    [[ "$stderr" == *"has code that runs before main() (a constructor"* ]] || fail "stderr: $stderr"
}

@test "make test's summary line counts skips by the first clause of their reason" {
    # A real bats run of a stand-in suite, so the TAP is what bats writes
    # (printf, not a here-document: bats would read its @test lines as ours).
    printf '%s\n' \
        '@test "gpu one" { skip "no usable GPU here: no CUDA-capable GPU is visible (cudaGetDeviceCount)"; }' \
        '@test "gpu two" { skip "no usable GPU here: the CUDA driver is not usable (x: y)"; }' \
        '@test "gpu three" { skip "no usable GPU here: no CUDA driver found"; }' \
        '@test "slurm" { skip "Slurm is not installed (apt-get install slurm-wlm munge; tests/run.sh does where CI=true)"; }' \
        '@test "no reason" { skip; }' \
        '@test "issue #18: a name with a hash passes" { true; }' \
        '@test "one passes" { true; }' \
        '@test "one fails" { false; }' >"$BATS_TEST_TMPDIR/stand_in.bats"
    bats --tap "$BATS_TEST_TMPDIR/stand_in.bats" >"$BATS_TEST_TMPDIR/tap" || true
    run tests/tools/bats_summary.sh "$BATS_TEST_TMPDIR/tap"
    assert_success
    assert_output "bats: 2 passed, 1 failed, 5 skipped (3: no usable GPU here; 1: Slurm is not installed; 1: no reason given)"
    printf '1..1\nok 1 all good\n' >"$BATS_TEST_TMPDIR/tap"
    run tests/tools/bats_summary.sh "$BATS_TEST_TMPDIR/tap"
    assert_output "bats: 1 passed, 0 failed, 0 skipped"
    # and it is the line make test ends with
    grep -q '^tests/tools/bats_summary.sh build/tests/bats.tap$' tests/run.sh
}
