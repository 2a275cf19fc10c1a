#!/usr/bin/env bats
# The PyTorch companions (labs/labNN_*/torch_labNN.py) on the CPU side: their
# options and usage errors, which need no PyTorch, and the one line and exit 3
# where PyTorch or a GPU is missing. PYTHON= names the interpreter (python3).

load test_helper

PY=${PYTHON:-python3}
companions() { ls labs/lab[0-9][0-9]_*/torch_lab[0-9][0-9].py; }
name_of() { basename "$1" .py; }

# Every lab but lab00 (the device itself, which PyTorch does not expose)
# has a companion: a new lab that lands without one fails here.
@test "every lab from lab01 on has its PyTorch companion" {
    local dir n count=0
    for dir in labs/lab[0-9][0-9]_*/; do
        n=$(basename "$dir" | cut -c4-5)
        [ "$n" = 00 ] && continue
        [ -f "$dir/torch_lab$n.py" ] || fail "no torch_lab$n.py in $dir"
        count=$((count + 1))
    done
    ((count >= 9)) || fail "only $count labs with companions"
}

@test "the companions read every exit code and its meaning from the C labs' own files" {
    run "$PY" -c 'import sys; sys.path.insert(0, "labs"); import torch_common as t; print(sorted(t.EXIT.values()), sorted(t.MEANING))'
    assert_success
    assert_output "[0, 1, 2, 3, 4] [0, 1, 2, 3, 4]"
}

@test "every companion's --help names --quick, --json and --reps, without importing PyTorch" {
    for f in $(companions); do
        run "$PY" -I -S "$f" --help
        [ "$status" -eq 0 ] || fail "$f --help: exit $status"
        for opt in --quick --json --reps; do
            [[ "$output" == *"$opt"* ]] || fail "$f --help does not name $opt"
        done
    done
}

@test "every companion refuses a bad option with one line naming it, and exit 2" {
    for f in $(companions); do
        run --separate-stderr "$PY" -I -S "$f" --reps 0
        [ "$status" -eq 2 ] || fail "$f --reps 0: exit $status, expected 2"
        assert_equal "$stderr" "$(name_of "$f"): --reps must be an integer from 1 to 1000 (got '0')"
        run --separate-stderr "$PY" -I -S "$f" --no-such-option
        [ "$status" -eq 2 ] || fail "$f --no-such-option: exit $status, expected 2"
        assert_equal "$stderr" "$(name_of "$f"): unrecognized arguments: --no-such-option"
    done
}

@test "without PyTorch every companion exits 3 with one line saying so, and prints no report" {
    # -I -S: no site-packages, so no PyTorch, whatever this machine has
    for f in $(companions); do
        for args in "" --quick --json; do
            run --separate-stderr "$PY" -I -S "$f" $args
            [ "$status" -eq 3 ] || fail "$f $args: exit $status, expected 3"
            [ -z "$output" ] || fail "$f $args printed: $output"
            [[ "$stderr" == "$(name_of "$f"): cannot run here: PyTorch is not installed for "* ]] ||
                fail "$f $args: $stderr"
            [ "$(printf '%s\n' "$stderr" | wc -l)" -eq 1 ] || fail "$f $args: not one line: $stderr"
        done
    done
}

@test "with PyTorch but no GPU visible every companion exits 3 with one line saying so" {
    "$PY" -c 'import torch' 2>/dev/null || skip "no PyTorch for $PY (optional): this path needs it"
    for f in $(companions); do
        CUDA_VISIBLE_DEVICES= run --separate-stderr "$PY" "$f" --quick --json
        [ "$status" -eq 3 ] || fail "$f: exit $status, expected 3"
        [ -z "$output" ] || fail "$f printed: $output"
        assert_equal "$stderr" "$(name_of "$f"): cannot run here: no usable GPU: torch.cuda.is_available() is False"
    done
}

@test "make torch-labs runs every companion and waives those that cannot run here" {
    run make -s torch-labs PYTHON="$PY -I -S" TORCH_ARGS=--quick
    assert_success
    for f in $(companions); do
        assert_output --partial "== $PY -I -S $f --quick"
    done
}

# A companion whose effect is not seen (exit 4) runs again from the start, at
# most three attempts in all; tests/fixtures/faketorch stands in for PyTorch
# and its flaky_companion.py sees its effect from the attempt OBSERVE_AT says.
flaky() { PYTHONPATH=tests/fixtures/faketorch run --separate-stderr "$PY" tests/fixtures/faketorch/flaky_companion.py "$@"; }

@test "a companion that misses its effect measures everything again, and its report names each earlier miss" {
    OBSERVE_AT=2 flaky
    assert_success
    assert_output --partial "flaky_companion: not observed in attempt 1 of 3 (call_returns): measuring everything again from the start"
    assert_output --partial "a verdict that holds from a given attempt (attempt 2 of 3)"
    assert_output --partial "attempt 1 of 3 missed: call_returns: the call took 20% of the copy (limit: at most 10%)"
    [ "$(grep -c '^result:' <<<"$output")" = 2 ] || fail "not two attempts: $output"
    OBSERVE_AT=2 flaky --json
    assert_success
    run python3 -c 'import json, sys; d = json.loads(sys.argv[1]); print(d["attempt"], d["attempts_at_most"], d["exit"], [[v["name"] for v in a] for a in d["earlier_misses"]])' "$output"
    assert_output "2 3 0 [['call_returns']]"
}

@test "a companion gives up after three attempts with exit 4, and one whose results are wrong is not run again" {
    OBSERVE_AT=0 flaky --json
    [ "$status" -eq 4 ] || fail "exit $status"
    run python3 -c 'import json, sys; d = json.loads(sys.argv[1]); print(d["attempt"], len(d["earlier_misses"]), d["verdict"]["observed"])' "$output"
    assert_output "3 2 False"
    WRONG=1 OBSERVE_AT=2 flaky
    [ "$status" -eq 1 ] || fail "exit $status"
    [ "$(grep -c '^result:' <<<"$output")" = 1 ] || fail "run again: $output"
    refute_output --partial "attempt 2"
}
