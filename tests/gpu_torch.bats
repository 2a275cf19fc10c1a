#!/usr/bin/env bats
# The PyTorch companions on a GPU: each observes its lab's effect and exits 0,
# its results checked. They skip, with the reason, without a GPU or without a
# PyTorch that sees one (PYTHON= names the interpreter; default python3).

load test_helper

PY=${PYTHON:-python3}

setup() {
    require_gpu
    local why
    why=$("$PY" -c 'import torch; print("" if torch.cuda.is_available() else "PyTorch " + torch.__version__ + " sees no GPU")' 2>&1 | tail -1) ||
        skip "no PyTorch for $PY (optional): $why"
    [ -z "$why" ] || skip "$why"
}

# companion NN ARGS...: runs torch_labNN.py --json ARGS into $BATS_TEST_TMPDIR/NN.json,
# which must report every check right and every verdict observed, exit 0.
companion() {
    local n=$1 json="$BATS_TEST_TMPDIR/$1.json"
    shift
    run --separate-stderr "$PY" labs/lab${n}_*/torch_lab$n.py --json "$@"
    printf '%s\n' "$output" >"$json"
    [ "$status" -eq 0 ] || fail "torch_lab$n $*: exit $status: $stderr $output"
    ok "$(from_json "$json" "all(c['ok'] for c in d['checks'])")" "a check failed: $(from_json "$json" "d['checks']")"
    ok "$(from_json "$json" "d['verdict']['observed'] and len(d['verdict']['items']) > 0")" \
        "not observed: $(from_json "$json" "d['verdict']")"
}

@test "torch_lab01: a legacy-stream op serialises blocking streams, not torch.cuda.Stream()s" {
    companion 01 --quick
    ok "$(from_json "$BATS_TEST_TMPDIR/01.json" "[s['value'] for s in d['setup']][:2] == [0, 1]")" \
        "PyTorch's current stream is not the legacy stream, or its streams are not non-blocking"
}

@test "torch_lab02: .to(non_blocking=True) waits for a pageable copy, not for a pinned one" {
    companion 02 --quick
}

@test "torch_lab03: events read the kernel, the host clock without a wait does not" {
    companion 03 --quick
}

@test "torch_lab04: two streams and pinned batches come close to lab04's model" {
    companion 04 --quick
}

@test "torch_lab05: a small matmul on the greatest priority jumps the queue" {
    companion 05 --quick
}

@test "torch_lab06: a consumer stream without wait_stream reads early; with it, right" {
    companion 06 --quick
}

@test "torch_lab07: a pool of torch.cuda.Stream()s serves small requests at once; the 33rd Stream() is the 1st" {
    companion 07 --quick
    ok "$(from_json "$BATS_TEST_TMPDIR/07.json" "[s['value'] for s in d['setup']][:2] == [32, True]")" \
        "PyTorch's pool is not 32 streams handed out round robin: $(from_json "$BATS_TEST_TMPDIR/07.json" "d['setup']")"
}

@test "torch_lab08: wait_event and wait_stream chains follow the pipeline model, the host chain blocks the host" {
    companion 08 --quick
}

@test "torch_lab09: .item(), .cpu(), synchronize() and nonzero() make the host wait, Event.query() does not" {
    companion 09 --quick
    ok "$(from_json "$BATS_TEST_TMPDIR/09.json" "len(d['calls']) == 12")" "not every call of the catalogue was measured"
}

@test "torch_lab10: a tensor freed on A while B reads it is refilled under B; record_stream(B) keeps it" {
    companion 10 --quick
}

@test "torch_lab11: DataLoader workers keep the GPU busy as lab11's model says, every batch right" {
    companion 11 --quick
}

@test "torch_lab12: a torch.cuda.CUDAGraph replays a thousand tiny ops faster than eager launches, on fresh static inputs" {
    companion 12 --quick
}

@test "torch_lab13: DDP's buckets overlap the backward pass on two GPUs; on one it says it needs two, exit 3" {
    export NCCL_NVLS_ENABLE=0
    if (($("$PY" -c 'import torch; print(torch.cuda.device_count())') < 2)); then
        run --separate-stderr "$PY" labs/lab13_gradient_overlap/torch_lab13.py --quick
        assert_failure 3
        assert_equal "$stderr" "torch_lab13: cannot run here: cannot show the overlap here: needs 2 GPUs (PyTorch sees 1)"
    else
        companion 13 --quick
    fi
}

# PyTorch 2.12 and newer: GreenContext(num_sms=...).Stream(); older ones lack it.
has_green() { "$PY" -c 'import sys, torch; g = getattr(getattr(torch.cuda, "green_contexts", None), "GreenContext", None); sys.exit(not (g and hasattr(g, "Stream")))'; }

@test "torch_lab14: a matmul in a 16-SM green context takes about SMs / 16 as long; a PyTorch without green-context streams exits 3" {
    if has_green; then
        companion 14 --quick
    else
        run --separate-stderr "$PY" labs/lab14_green_contexts/torch_lab14.py --quick
        assert_failure 3
        assert_output --partial "torch_lab14"
        [[ "$stderr" == "torch_lab14: cannot run here: PyTorch "*"GreenContext"* ]] || fail "$stderr"
    fi
}

@test "every companion observes its effect at its default sizes" {
    export NCCL_NVLS_ENABLE=0
    gpus=$("$PY" -c 'import torch; print(torch.cuda.device_count())')
    for f in labs/lab[0-9][0-9]_*/torch_lab[0-9][0-9].py; do
        n=${f##*torch_lab}
        [ "${n%.py}" = 13 ] && ((gpus < 2)) && continue # needs two GPUs (its own test above)
        [ "${n%.py}" = 14 ] && ! has_green && continue # its own test above
        companion "${n%.py}"
    done
}
