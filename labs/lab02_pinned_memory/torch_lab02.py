#!/usr/bin/env python3
"""torch_lab02: lab02's async trap through PyTorch.

x.to('cuda', non_blocking=True) is cudaMemcpyAsync underneath. From pageable
memory (a plain CPU tensor) the driver stages the bytes through a pinned
buffer of its own with the CPU, so the call returns only when the copy is
nearly over: nothing overlaps with it. From x.pin_memory() the copy is queued
in the current stream and the call returns at once. The model, and the limits
(lab02's): the pageable call takes at least 80% of the copy's time, the
pinned call at most 10% of it. The copy's time comes from events recorded
around it in its stream, the call's from the host clock around the call alone.
Run: python3 labs/lab02_pinned_memory/torch_lab02.py [--quick] [--json] [--reps N]
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from torch_common import Lab, median  # noqa: E402

lab = Lab("torch_lab02", "pinned vs pageable: when does .to('cuda', non_blocking=True) return?",
          reps=10, quick_reps=5)
torch = lab.torch
# Also with --quick: PyTorch's call costs 30-150 us itself (153 us on a fresh
# H100, 2026-11-24: 10.9% of a 64 MiB copy). A 256 MiB pinned copy takes about
# 5 ms, so that cost stays near 3%, a third of the limit, while the pageable
# call still takes all of its copy.
mib = 256
pageable = torch.randint(-2**31, 2**31 - 1, (mib * 2**20 // 4,), dtype=torch.int32)  # fresh every run
pinned = pageable.pin_memory()  # page-locked: cudaHostAlloc through PyTorch's pinned-memory allocator
wrong = {"pageable": 0, "pinned": 0}


def one_copy(kind, src):
    """(the call's time, the copy's time) in ms for one upload from SRC."""
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    t0 = time.perf_counter()
    out = src.to("cuda", non_blocking=True)
    call = (time.perf_counter() - t0) * 1e3
    end.record()
    end.synchronize()
    wrong[kind] += int((out.cpu() != pageable).sum())  # every element, after the copy is done
    return call, start.elapsed_time(end)


lab.say(f"\nA {mib} MiB upload with non_blocking=True: the call's time beside the copy's")
samples = {"pageable": [], "pinned": []}
for rep in range(lab.args.reps + 1):  # round 0 warms up: the allocator's cache, the first copies
    for kind, src in (("pageable", pageable), ("pinned", pinned)):
        s = one_copy(kind, src)
        if rep:
            samples[kind].append(s)
share = {}
for kind in samples:
    call, copy = (median(x) for x in zip(*samples[kind]))
    share[kind] = median(c / d for c, d in samples[kind])
    lab.measured(f"{kind} copy (events)", copy, "ms")
    lab.measured(f"{kind} bandwidth", mib * 2**20 / copy / 1e6, "GB/s")
    lab.measured(f"{kind} call returned after", call, "ms", copy if kind == "pageable" else None,
                 "the copy's time: the CPU stages it")
lab.check("bytes_intact", sum(wrong.values()), 2 * (lab.args.reps + 1) * pageable.numel(),
          "elements differ after the uploads")
lab.verdict("pageable_call_waits", share["pageable"] >= 0.8,
            f"the pageable call took {share['pageable']:.0%} of its copy's time (median of the pairs)",
            "at least 80%")
lab.verdict("pinned_call_returns", share["pinned"] <= 0.1,
            f"the pinned call took {share['pinned']:.1%} of its copy's time (median of the pairs)",
            "at most 10%")
lab.finish()
