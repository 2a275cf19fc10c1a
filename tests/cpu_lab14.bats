#!/usr/bin/env bats
# lab14 and ex14 on the CPU side: their own options' ranges, --help and
# --dry-run, which must answer without touching a GPU, and the one line and
# exit 3 where there is no GPU or driver to split; built without NCCL (part
# 3's), lab14 builds all the same.

load test_helper

@test "lab14's own numbers are range-checked" {
    run --separate-stderr ./lab14 --partition-sms 0
    assert_failure 2
    assert_equal "$stderr" "lab14: --partition-sms must be an integer from 1 to 1024 (got '0')"
    run --separate-stderr ./lab14 --waves 4
    assert_failure 2
    assert_equal "$stderr" "lab14: --waves must be an integer from 5 to 1000 (got '4')"
    run --separate-stderr ./lab14 --urgent-us 1
    assert_failure 2
    assert_equal "$stderr" "lab14: --urgent-us must be a number from 2 to 1000 (got '1')"
    run --separate-stderr ./lab14 --block-us 10
    assert_failure 2
    assert_equal "$stderr" "lab14: --block-us must be a number from 20 to 10000 (got '10')"
    run --separate-stderr ./lab14 --comm-sms 0
    assert_failure 2
    assert_equal "$stderr" "lab14: --comm-sms must be an integer from 1 to 1024 (got '0')"
    run --separate-stderr ./lab14 --comm-rounds 2
    assert_failure 2
    assert_equal "$stderr" "lab14: --comm-rounds must be an integer from 3 to 100 (got '2')"
    run --separate-stderr ./lab14 --grad-mib 4
    assert_failure 2
    assert_equal "$stderr" "lab14: --grad-mib must be a number from 8 to 8192 (got '4')"
}

@test "lab14 --help names the partition's size, parts 2 and 3's options and the --quick values, and lists the exit codes" {
    run ./lab14 --help
    assert_success
    assert_output --regexp "--partition-sms K .*default 16\)"
    assert_output --regexp "--waves N .*default 50, --quick 10\)"
    assert_output --regexp "--urgent-blocks N .*default 16\)"
    assert_output --partial "--no-sweep"
    assert_output --regexp "--comm-sms K .*default 16\)"
    assert_output --regexp "--layer-ms MS .*default 0.148, --quick 0.074\)"
    assert_output --regexp "--grad-mib MIB .*default 1024, --quick 256\)"
    assert_output --regexp "--comm-rounds N .*default 7, --quick 3\)"
    assert_output --partial "--no-comm"
    assert_output --partial "exit codes"
}

@test "lab14 --dry-run shows what was typed and the --quick values without touching a GPU" {
    run ./lab14 --dry-run --quick --partition-sms 24 --no-sweep
    assert_success
    assert_output --partial "--partition-sms 24"
    assert_output --partial "--waves 10"
    assert_output --partial "--no-sweep on"
    run ./lab14 --dry-run --quick --comm-sms 32 --no-comm
    assert_success
    assert_output --partial "--comm-sms 32"
    assert_output --partial "--grad-mib 256"
    assert_output --partial "--no-comm on"
}

@test "lab14 without a GPU exits 3 with one line, before any green context is asked for" {
    require_no_gpu
    run --separate-stderr ./lab14 --quick
    assert_failure 3
    assert_output ""
    [[ "$stderr" == "lab14: cannot run here: "* ]] || fail "$stderr"
    [ "$(printf '%s\n' "$stderr" | wc -l)" -eq 1 ] || fail "not one line: $stderr"
}

@test "ex14 and sol14 take --partition-sms, --block-us, --waves, --grade and --check, and range-check them" {
    for p in $(programs | grep -xE 'ex14|sol14'); do
        run ./$p --help
        assert_success
        assert_output --regexp "--partition-sms K .*default 16\)"
        assert_output --regexp "--waves N .*default 50, --quick 10\)"
        assert_output --partial "--grade"
        assert_output --partial "--check"
        run --separate-stderr ./$p --partition-sms 0
        assert_failure 2
        assert_equal "$stderr" "$p: --partition-sms must be an integer from 1 to 1024 (got '0')"
        run --separate-stderr ./$p --waves 4
        assert_failure 2
        assert_equal "$stderr" "$p: --waves must be an integer from 5 to 1000 (got '4')"
        run ./$p --dry-run --quick --partition-sms 24
        assert_success
        assert_output --partial "--partition-sms 24"
        assert_output --partial "--waves 10"
    done
}

@test "ex14 and sol14 without a GPU exit 3 with one line, before the student's code runs" {
    require_no_gpu
    for p in $(programs | grep -xE 'ex14|sol14'); do
        run --separate-stderr ./$p --quick
        assert_failure 3
        [[ "$stderr" == "$p: cannot run here: "* ]] || fail "$stderr"
        [ "$(printf '%s\n' "$stderr" | wc -l)" -eq 1 ] || fail "not one line: $stderr"
    done
}

# Parts 1 and 2 need no NCCL: a machine without it still builds lab14, and
# (tests/gpu_lab14.bats) runs them, part 3 saying in one line what to install.
@test "without NCCL lab14 builds all the same, and --help still names part 3's options" {
    bin="$BATS_TEST_TMPDIR/bin"
    run make -s --no-print-directory NCCL=no BINDIR="$bin" lab14
    assert_success
    run "$bin/lab14" --help
    assert_success
    assert_output --partial "--comm-sms"
    run --separate-stderr "$bin/lab14" --quick
    assert_failure 3
    [[ "$stderr" == "lab14: cannot run here: "* ]] || fail "$stderr"
    [ "$(printf '%s\n' "$stderr" | wc -l)" -eq 1 ] || fail "not one line: $stderr"
}
