#!/usr/bin/env python3
"""torch_lab04: lab04's double buffer through PyTorch.

n batches, each uploaded (h), computed on (k: a calibrated _sleep, then
x * 3 + 1 so that the result can be checked) and downloaded (d). In one
stream the copy engines and the SMs take turns: serial = n (h + k + d). With
two torch.cuda.Stream()s and a device buffer each (batch i on stream i % 2),
batch i+1 uploads while batch i computes. lab04's model for it, with k = h:
the larger of the engines' bound (h+k+d) + (n-1) max(h,k,d) and the streams'
bound (each stream runs its own batches in order, h+k+d each): about 1.9x for
16 balanced batches, not 3x. It needs pinned host memory (pin_memory()) and
non_blocking=True both ways (torch_lab02 shows why). The events are in the
current stream, which the two streams fork from and join (wait_stream).
Run: python3 labs/lab04_double_buffering/torch_lab04.py [--quick] [--json] [--reps N]
"""
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from torch_common import Lab, median  # noqa: E402

lab = Lab("torch_lab04", "double buffering from PyTorch: pinned batches, two streams", reps=5, quick_reps=3)
torch = lab.torch
n, mib = (8, 8) if lab.args.quick else (16, 16)
numel = mib * 2**20 // 4
inputs = [torch.randint(-2**20, 2**20, (numel,), dtype=torch.int32).pin_memory() for _ in range(n)]
outputs = [torch.empty_like(x).pin_memory() for x in inputs]
expected = [x * 3 + 1 for x in inputs]
buffers = [torch.empty(numel, dtype=torch.int32, device="cuda") for _ in range(2)]
streams = [torch.cuda.Stream(), torch.cuda.Stream()]
spin = lab.calibrate_spin()
k_ms = 0.0  # set below, once h is measured


def compute(buf):
    spin(k_ms)
    buf.mul_(3).add_(1)


def batch(i, buf):
    buf.copy_(inputs[i], non_blocking=True)
    compute(buf)
    outputs[i].copy_(buf, non_blocking=True)


def serial():
    for i in range(n):
        batch(i, buffers[0])


def double_buffered():
    here = torch.cuda.current_stream()
    for s in streams:
        s.wait_stream(here)  # fork: the start event comes first
    for i in range(n):
        with torch.cuda.stream(streams[i % 2]):
            batch(i, buffers[i % 2])
    for s in streams:
        here.wait_stream(s)  # join: the end event comes last


lab.say(f"\nEach stage of one {mib} MiB batch alone (events, median of {lab.args.reps})")
h = lab.median_ms(lambda: buffers[0].copy_(inputs[0], non_blocking=True))
k_ms = h  # a balanced load, where overlap pays most (lab04)
k = lab.median_ms(lambda: compute(buffers[0]))
d = lab.median_ms(lambda: outputs[0].copy_(buffers[0], non_blocking=True))
for name, t in (("h (upload)", h), ("k (compute)", k), ("d (download)", d)):
    lab.measured(name, t, "ms")

wrong, times = 0, {"serial": [], "double": []}
for rep in range(lab.args.reps + 1):  # round 0 warms up
    for name, run in sorted((("serial", serial), ("double", double_buffered)), reverse=rep % 2 == 1):
        for out in outputs:
            out.fill_(-1)  # poison: a batch never downloaded cannot pass
        t = lab.event_ms(run)
        wrong += sum(int((o != e).sum()) for o, e in zip(outputs, expected))
        if rep:
            times[name].append(t)
serial_model = n * (h + k + d)
engines = (h + k + d) + (n - 1) * max(h, k, d)
busiest = max(math.ceil(n / 2) * (h + k + d), h + n // 2 * (h + k + d))
model = max(engines, busiest)
lab.say(f"\n{n} batches")
lab.measured("serial, one stream", median(times["serial"]), "ms", serial_model, "n (h + k + d)")
lab.measured("double buffered, two streams", median(times["double"]), "ms", model,
             "max(engines' bound, busiest stream)")
lab.check("batches_intact", wrong, 2 * (lab.args.reps + 1) * n * numel, "elements differ from x * 3 + 1")
speedup = median(s / p for s, p in zip(times["serial"], times["double"]))
efficiency = speedup / (serial_model / model)
lab.verdict("double_buffer_reaches_model", efficiency >= 0.8,
            f"{speedup:.2f}x faster than serial (median of the rounds' pairs), the model {serial_model / model:.2f}x:"
            f" {efficiency:.0%} of it", "at least 80%")
lab.finish()
