#!/usr/bin/env python3
"""torch_lab06: lab06's race through PyTorch. What does a consumer stream read
when nothing tells it to wait for the producer?

A producer on stream A fills a buffer (late on purpose: a calibrated 2 ms
_sleep first); a consumer on stream B copies it out. Both are
torch.cuda.Stream()s: non-blocking, so nothing orders them unless you say so.
  (a) no dependency: B runs at once and reads the poison in every element
      (the model: all wrong, since the producer is 2 ms late);
  (b) B.wait_stream(A): B waits on the GPU for what A has queued so far;
  (c) an event: e.record(A), then B.wait_event(e); the same, for one point;
  (d) A.synchronize() before queuing the consumer: right, but the HOST waits.
(b) and (c) are cudaEventRecord + cudaStreamWaitEvent; (d) cudaStreamSynchronize.
Every variant is checked element by element, --reps times on fresh inputs.
Exit codes as lab06's: a fix's wrong results exit 1, a race not shown exits 4.
Run: python3 labs/lab06_stream_races/torch_lab06.py [--quick] [--json] [--reps N]
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from torch_common import Lab, median  # noqa: E402

lab = Lab("torch_lab06", "cross-stream races from PyTorch: wait_stream, wait_event, synchronize",
          reps=10, quick_reps=5)
torch = lab.torch
numel, late_ms = 2**20 if lab.args.quick else 2**22, 2
A, B = torch.cuda.Stream(), torch.cuda.Stream()
shared, out = (torch.empty(numel, dtype=torch.int32, device="cuda") for _ in range(2))
spin = lab.calibrate_spin()


def run(order):
    """Produce on A, ORDER the streams, consume on B; (wrong elements, host ms to queue it all)."""
    src = torch.randint(-2**31, 2**31 - 1, (numel,), dtype=torch.int32, device="cuda")  # fresh
    shared.fill_(-1)  # poison: read too early
    out.fill_(-2)  # poison: never consumed
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    with torch.cuda.stream(A):
        spin(late_ms)
        shared.copy_(src)
    order()
    with torch.cuda.stream(B):
        out.copy_(shared)
    host = (time.perf_counter() - t0) * 1e3
    torch.cuda.synchronize()
    return int((out != src).sum()), host


variants = {"(a) no dependency": lambda: None,
            "(b) B.wait_stream(A)": lambda: B.wait_stream(A),
            "(c) B.wait_event(e)": lambda: B.wait_event(A.record_event()),  # e = an event recorded in A
            "(d) A.synchronize()": A.synchronize}
results = {}
lab.say(f"\nProducer on A ({late_ms} ms late), consumer on B: elements wrong of {lab.args.reps * numel}, host time")
for name, order in variants.items():
    run(order)  # warm-up
    samples = [run(order) for _ in range(lab.args.reps)]
    wrong, host = sum(w for w, _ in samples), median(h for _, h in samples)
    results[name] = wrong, host
    race = name.startswith("(a)")
    lab.measured(f"{name}: wrong", wrong, "elements", lab.args.reps * numel if race else None,
                 "every element: the producer is late")
    lab.measured(f"{name}: host queued in", host, "ms")
total = lab.args.reps * numel
for name in list(variants)[1:]:
    lab.check(name.split(" ", 1)[1], results[name][0], total, "elements wrong")
race = results["(a) no dependency"][0]
lab.verdict("consumer_reads_early", race >= 0.9 * total,
            f"without a dependency {race} of {total} elements were read before the producer wrote them",
            "at least 90% (the model: all)")
gpu_wait, host_wait = results["(b) B.wait_stream(A)"][1], results["(d) A.synchronize()"][1]
lab.verdict("gpu_wait_frees_host", gpu_wait <= 0.25 * late_ms <= host_wait,
            f"the host queued (b) in {gpu_wait:.3f} ms, (d) in {host_wait:.3f} ms, the producer late by {late_ms} ms",
            f"(b) at most {0.25 * late_ms:g} ms, (d) at least that")
lab.finish()
