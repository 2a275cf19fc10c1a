#!/usr/bin/env python3
"""torch_lab03: lab03's question through PyTorch. How do you time GPU work?

A kernel of known duration (torch.cuda._sleep, 5 ms once calibrated) timed
three ways, as lab03 does:
  - time.perf_counter() around the launch alone: a launch returns before the
    kernel runs, so it reads the launch (microseconds), not the kernel;
  - time.perf_counter() around the launch and torch.cuda.synchronize(): the
    kernel plus the launch and the wait (tens of microseconds more);
  - torch.cuda.Event(enable_timing=True) recorded in the kernel's stream before
    and after it: the kernel, read by the GPU.
And an event asked too early: end.query() is False while the kernel runs
(cudaErrorNotReady underneath; end.synchronize() is the wait).
Also the very first launch of a kernel: under lazy module loading it loads
the kernel, so it costs more than the later ones: warm up before timing.
Run: python3 labs/lab03_event_timing/torch_lab03.py [--quick] [--json] [--reps N]
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from torch_common import Lab, median  # noqa: E402

lab = Lab("torch_lab03", "timing GPU work from PyTorch: the host clock, synchronize, events",
          reps=10, quick_reps=5)
torch = lab.torch
ms = 2 if lab.args.quick else 5
torch.zeros(1, device="cuda")  # the context, so that it stays out of the first launch


def host_ms(work):
    t0 = time.perf_counter()
    work()
    return (time.perf_counter() - t0) * 1e3


lab.say("\nThe first launch of a kernel")
first = host_ms(lambda: torch.cuda._sleep(1000))
later = median(host_ms(lambda: torch.cuda._sleep(1000)) for _ in range(lab.args.reps))
lab.measured("first launch of _sleep (host)", first, "ms")
lab.measured("later launches (host, median)", later, "ms")
spin = lab.calibrate_spin()

lab.say(f"\nA {ms} ms kernel timed three ways (medians of {lab.args.reps}, after a warm-up)")
no_wait, with_wait, events, early = [], [], [], []
for rep in range(lab.args.reps + 1):
    torch.cuda.synchronize()
    a = host_ms(lambda: spin(ms))
    torch.cuda.synchronize()
    b = host_ms(lambda: (spin(ms), torch.cuda.synchronize()))
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    spin(ms)
    end.record()
    asked_early = end.query()  # the kernel has barely started
    end.synchronize()
    if rep:
        for samples, value in ((no_wait, a), (with_wait, b), (events, start.elapsed_time(end)), (early, asked_early)):
            samples.append(value)
nw, ww, ev = median(no_wait), median(with_wait), median(events)
lab.measured("host clock, launch alone", nw, "ms", ms, "the kernel")
lab.measured("host clock, launch + synchronize", ww, "ms", ms, "the kernel")
lab.measured("events in the kernel's stream", ev, "ms", ms, "the kernel")
lab.verdict("host_clock_without_wait_lies", nw <= 0.1 * ev,
            f"the launch alone read {nw:.3f} ms of a {ev:.3f} ms kernel", "at most 10%")
lab.verdict("events_read_the_kernel", 0.9 * ww <= ev <= 1.02 * ww,
            f"events {ev:.3f} ms, host clock with a wait {ww:.3f} ms ({ev / ww:.1%})",
            "90% to 102% of the host clock with a wait: its launch and wait on top, 2% for the spin's own spread")
lab.verdict("event_not_ready_early", not any(early),
            f"end.query() right after the launch was True in {sum(early)} of {len(early)} runs", "none")
lab.finish()
