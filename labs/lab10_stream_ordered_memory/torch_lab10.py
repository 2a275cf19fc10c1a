#!/usr/bin/env python3
"""torch_lab10: lab10's part 4 through PyTorch. A tensor made on stream A and
read on stream B: when A drops it, may the caching allocator hand its memory
to A's next tensor while B still reads it?

PyTorch's caching allocator is stream-ordered, like cudaMallocAsync's pool:
a block freed by a tensor made on A is ready at once for A's next request,
ordered after what A has queued, and after nothing of B's. Each run:
  x = fresh words, on A; B waits for A (B.wait_stream(A)), spins 5 ms
  (2 with --quick), then counts x's wrong words against a copy, on the GPU;
  del x on the host; at once y = torch.full(-1) on A, x's size.
  (a) without record_stream: y gets x's block (the same data_ptr), A fills it
      at once, and B, still spinning, reads y's words: every word wrong;
  (b) x.record_stream(B) before del x: the allocator keeps the block until
      the work B has queued so far is done, y gets another block: 0 wrong.
(b) is what lab10's event wait before cudaFreeAsync, or a free in B, does.
Exit codes as lab10's: (b)'s wrong words exit 1, (a)'s race not shown exits 4.
Run: python3 labs/lab10_stream_ordered_memory/torch_lab10.py [--quick] [--json] [--reps N]
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from torch_common import Lab, median  # noqa: E402

lab = Lab("torch_lab10", "who may free a tensor another stream reads: record_stream",
          reps=10, quick_reps=5)
torch = lab.torch
numel, late_ms = 2**20 if lab.args.quick else 2**22, 2 if lab.args.quick else 5
A, B = torch.cuda.Stream(), torch.cuda.Stream()
spin = lab.calibrate_spin()


def run(record):
    """One run; (wrong words B counted, whether y got x's block)."""
    with torch.cuda.stream(A):
        x = torch.randint(-2**31, 2**31 - 1, (numel,), dtype=torch.int32, device="cuda")  # fresh
        ref = x.clone()  # what B must read; stays alive, so its block is never y's
    B.wait_stream(A)  # B may read x once A wrote it
    with torch.cuda.stream(B):
        spin(late_ms)
        wrong = (x != ref).sum()  # counted on the GPU, made on B
    if record:
        x.record_stream(B)  # "B uses x": keep its block until B's queued work is done
    x_ptr = x.data_ptr()
    del x  # freed to the caching allocator, for stream A
    with torch.cuda.stream(A):
        y = torch.full((numel,), -1, dtype=torch.int32, device="cuda")  # A's next tensor, at once
    reused = y.data_ptr() == x_ptr
    torch.cuda.synchronize()
    wrong_count = int(wrong)
    del y, ref, wrong
    return wrong_count, reused


results = {}
lab.say(f"\nx made on A, read on B {late_ms} ms later; A drops x and makes y at once: "
        f"words B read wrong, of {lab.args.reps * numel}")
for name, record in (("(a) without record_stream", False), ("(b) x.record_stream(B)", True)):
    run(record)  # warm-up: the allocator's first blocks
    samples = [run(record) for _ in range(lab.args.reps)]
    wrong, reused = sum(w for w, _ in samples), sum(r for _, r in samples)
    results[name] = wrong, reused
    lab.measured(f"{name}: wrong", wrong, "words", lab.args.reps * numel if not record else 0,
                 "every word, if y reuses x's block" if not record else "none")
    lab.measured(f"{name}: y got x's block", reused, "runs")
    lab.say(f"  median run: {median(w for w, _ in samples):.0f} of {numel} words wrong")
total = lab.args.reps * numel
lab.check("record_stream", results["(b) x.record_stream(B)"][0], total, "words wrong")
race, reused = results["(a) without record_stream"]
lab.verdict("free_without_record_stream_races", race >= 0.5 * total and reused > 0,
            f"without record_stream {race} of {total} words B read were y's, y took x's block in "
            f"{reused} of {lab.args.reps} runs", "at least half (the model: all)")
lab.finish()
