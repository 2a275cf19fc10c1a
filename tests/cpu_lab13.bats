#!/usr/bin/env bats
# lab13 on the CPU side: its own options' ranges and their rule, --help and
# --dry-run (no GPU, no NCCL touched), the environments it refuses before
# its first CUDA call, and the build without NCCL: lab13 still builds and
# says in one line what to install.

load test_helper

@test "lab13's own numbers are range-checked, and the slow link's gradients may exceed the main job's" {
    run --separate-stderr ./lab13 --layers 1
    assert_failure 2
    assert_equal "$stderr" "lab13: --layers must be an integer from 2 to 256 (got '1')"
    run --separate-stderr ./lab13 --slow-ctas 0
    assert_failure 2
    assert_equal "$stderr" "lab13: --slow-ctas must be an integer from 1 to 32 (got '0')"
    # one set of buffers, the larger job's: each size is typed alone, whatever the other
    run ./lab13 --dry-run --grad-mib 64 --slow-grad-mib 128
    assert_success
    assert_output --partial "--grad-mib 64"
    assert_output --partial "--slow-grad-mib 128"
}

@test "lab13 --help names its options and the --quick values, and --dry-run touches no GPU" {
    run ./lab13 --help
    assert_success
    assert_output --regexp "--layers L .*default 24, --quick 12\)"
    assert_output --regexp "--grad-mib MIB .*default 1024, --quick 256\)"
    assert_output --regexp "--bucket-mib MIB .*default 25\)"
    assert_output --partial "--no-wait"
    run ./lab13 --dry-run --quick --bucket-mib 8
    assert_success
    assert_output --partial "--bucket-mib 8"
    assert_output --partial "--layers 12"
}

@test "lab13 refuses CUDA_LAUNCH_BLOCKING=1 before any CUDA call: one thread driving two GPUs would hang" {
    grep -q "NCCL found" <(make -s --no-print-directory help) || skip "this build has no NCCL"
    run --separate-stderr env CUDA_LAUNCH_BLOCKING=1 ./lab13 --quick
    assert_failure 3
    assert_equal "$stderr" "lab13: cannot run here: CUDA_LAUNCH_BLOCKING=1 makes each GPU's all-reduce wait for the others, which one thread launches after it: it would hang; unset it"
}

@test "without NCCL lab13 builds all the same, and exits 3 saying what to install" {
    bin="$BATS_TEST_TMPDIR/bin"
    run make -s --no-print-directory NCCL=no BINDIR="$bin" lab13
    assert_success
    run --separate-stderr "$bin/lab13" --quick
    assert_failure 3
    assert_equal "$stderr" "lab13: cannot run here: this program was built without NCCL, which lab13 uses to sum gradients across GPUs: install it (the CUDA toolkit's, NCCL_HOME=dir, or pip install nvidia-nccl-cu13) and run make again"
    run "$bin/lab13" --help
    assert_success
}

@test "ex13 and sol13 take --layers, --grad-mib, --bucket-mib, --grade and --check, and range-check them" {
    for p in $(programs | grep -xE 'ex13|sol13'); do
        run ./$p --help
        assert_success
        assert_output --regexp "--layers L .*default 24, --quick 12\)"
        assert_output --regexp "--bucket-mib MIB .*default 25\)"
        assert_output --partial "--grade"
        assert_output --partial "--check"
        run --separate-stderr ./$p --bucket-mib 0.1
        assert_failure 2
        assert_equal "$stderr" "$p: --bucket-mib must be a number from 0.25 to 8192 (got '0.1')"
    done
}
