#!/usr/bin/env python3
"""torch_lab12: lab12's question through PyTorch. N tiny dependent ops, each a kernel: launched by the host one by one, or captured once as a CUDA graph and replayed?

N in-place ops on one small int64 tensor, alternately x *= 3 and x += k (each
op its own kernel, each depending on the one before; an op skipped or run out
of order leaves another value). Two ways:
  eager:  the Python loop issues every op: each costs the host the launch
          and PyTorch's own dispatch, and the GPU waits for it;
  graph:  torch.cuda.graph() captures the same loop once, on PyTorch's side
          stream, into a torch.cuda.CUDAGraph; each replay is one call.
A graph replays on the memory it was captured with: the input is a static
tensor, and every replay copies a fresh input into it first (static.copy_()),
so a replay that did nothing leaves the old answer and is caught.
Model (lab12's): eager takes N x max(host per op, GPU per op), the host's
time in the loop when the host is the slower; the graph about N x the GPU's
per-node cost. Verdicts: eager within 25% of its host time (host-bound), the
replay at least twice as fast as eager (H100 probe: 7.1 -> 1.25 us an op, 5.7x).
Run: python3 labs/lab12_cuda_graphs/torch_lab12.py [--quick] [--json] [--reps N]
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from torch_common import Lab, median  # noqa: E402

lab = Lab("torch_lab12", "CUDA graphs from PyTorch: a thousand tiny ops launched, or replayed as one graph",
          reps=7, quick_reps=3)
torch = lab.torch
N = 200 if lab.args.quick else 1000
WIDTH = 8  # a few words: the ops stay tiny
static = torch.zeros(WIDTH, dtype=torch.int64, device="cuda")
wrong = checked = 0


def ops(x):
    """The N ops, in place: x *= 3 on even k, x += k on odd k."""
    for k in range(N):
        if k % 2:
            x.add_(k)
        else:
            x.mul_(3)


def reference(values):
    """The CPU's answer, int64 wrapping as the GPU's does."""
    out = []
    for v in values:
        for k in range(N):
            v = (v + k) if k % 2 else v * 3
            v &= (1 << 64) - 1
        out.append(v - (1 << 64) if v >= 1 << 63 else v)
    return out


def fresh():
    return torch.randint(-1000, 1000, (WIDTH,), dtype=torch.int64)


def check(got, start):
    global wrong, checked
    want = reference(start.tolist())
    wrong += sum(a != b for a, b in zip(got.tolist(), want))
    checked += WIDTH


def eager():
    """One eager run: (its time from an idle GPU to synchronize, the host's time in the loop)."""
    start = fresh()
    static.copy_(start)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    ops(static)
    issued = time.perf_counter()
    torch.cuda.synchronize()
    done = time.perf_counter()
    check(static.cpu(), start)
    return (done - t0) * 1e3, (issued - t0) * 1e3


# Capture: a warm-up on a side stream first (PyTorch's advice: kernels and
# allocator state settle before the capture), then the loop once, recorded.
side = torch.cuda.Stream()
side.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(side):
    ops(static)
torch.cuda.current_stream().wait_stream(side)
graph = torch.cuda.CUDAGraph()
torch.cuda.synchronize()
t0 = time.perf_counter()
with torch.cuda.graph(graph):
    ops(static)
torch.cuda.synchronize()
capture_ms = (time.perf_counter() - t0) * 1e3


def replay():
    """One replay on a fresh input copied into the static tensor: (its time, the host's in replay())."""
    start = fresh()
    static.copy_(start)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    graph.replay()
    issued = time.perf_counter()
    torch.cuda.synchronize()
    done = time.perf_counter()
    check(static.cpu(), start)
    return (done - t0) * 1e3, (issued - t0) * 1e3


lab.say(f"\n{N} tiny in-place ops on {WIDTH} int64 words, each depending on the one before")
samples = {"eager": [], "graph": []}
for rep in range(lab.args.reps + 1):  # the first round is the warm-up; rounds alternate the order
    for way in (("eager", "graph") if rep % 2 else ("graph", "eager")):
        result = eager() if way == "eager" else replay()
        if rep:
            samples[way].append(result)
t = {w: median(s[0] for s in samples[w]) for w in samples}
host = {w: median(s[1] for s in samples[w]) for w in samples}
speedup = median(e[0] / g[0] for e, g in zip(samples["eager"], samples["graph"]))
lab.measured("capture (torch.cuda.graph)", capture_ms, "ms")
lab.measured("eager: run", t["eager"], "ms", host["eager"], "N x host per op (host-bound)")
lab.measured("eager: per op", t["eager"] * 1e3 / N, "us")
lab.measured("graph: run", t["graph"], "ms")
lab.measured("graph: per op", t["graph"] * 1e3 / N, "us")
lab.measured("graph: host in replay()", host["graph"] * 1e3, "us")
lab.check("every_value_right", wrong, checked, "values differ from the CPU's N ops in order (fresh inputs every run)")
lab.verdict("eager_is_host_bound", 0.8 <= t["eager"] / host["eager"] <= 1.25,
            f"eager {t['eager']:.3f} ms, the host's loop {host['eager']:.3f} ms: x{t['eager'] / host['eager']:.2f}",
            "x0.8 to x1.25 of the host's time")
lab.verdict("graph_replay_faster", speedup >= 2.0,
            f"{t['eager'] * 1e3 / N:.2f} -> {t['graph'] * 1e3 / N:.2f} us an op, {speedup:.2f}x round by round",
            "at least 2x")
lab.finish()
