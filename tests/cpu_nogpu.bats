#!/usr/bin/env bats
# Without a GPU or driver every program says why in one line and exits 3.

load test_helper

setup() { require_no_gpu; }

@test "every program exits 3 with one line naming the reason when no GPU can be used" {
    for p in $(programs); do
        for args in "" "--quick" "--csv" "--json"; do
            run --separate-stderr "./$p" $args
            [ "$status" -eq 3 ] || fail "$p $args: exit $status, expected 3"
            [ -z "$output" ] || fail "$p $args: printed a report: $output"
            [ "$(printf '%s\n' "$stderr" | wc -l)" -eq 1 ] || fail "$p $args: not one line: $stderr"
            [[ "$stderr" == "$p: cannot run here: "* ]] || fail "$p $args: $stderr"
        done
    done
}

@test "a machine with no driver is told so, with the CUDA error's name" {
    if ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1'; then
        skip "a CUDA driver library is installed here"
    fi
    run --separate-stderr ./lab00
    assert_failure 3
    assert_equal "$stderr" "lab00: cannot run here: no CUDA driver found (cudaErrorInsufficientDriver)"
}
