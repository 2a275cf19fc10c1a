#!/usr/bin/env python3
"""torch_lab07: lab07's question through PyTorch. Does a pool of streams serve small requests at once?

ex07's shape: N independent requests, each one kernel of T ms, served through
one stream, then through a pool of P torch.cuda.Stream()s, request i on stream
i mod P. A request is torch.cuda._sleep (calibrated): ONE block of one thread,
almost no SM, so the SMs never bound it; the hardware queues do. lab07's model:
at most w = min(P, queues) requests run at once (queues:
CUDA_DEVICE_MAX_CONNECTIONS, 8 unless set before the context exists), so the
pool's best speedup is N / ceil(N / w). Verdict as lab07's small_kernels_concurrent:
at least 80% of it. Then kernels that fill the GPU (a large fp32 matmul), lab07's
whole-GPU line: 8 of them on 8 streams gain nothing (1x within 10%). And the
pool itself: PyTorch hands out 32 streams per priority round robin, so the
33rd torch.cuda.Stream() is the first one again (same .cuda_stream).
Run: python3 labs/lab07_concurrent_kernels/torch_lab07.py [--quick] [--json] [--reps N] [--pool P] [--connections C]
"""
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from torch_common import Lab, integer, median  # noqa: E402



def options(p):
    p.add_argument("--pool", type=integer(1, 32), default=8, help="streams in the pool (P)")
    p.add_argument("--connections", type=integer(0, 32), default=0,
                   help="hardware queues: sets CUDA_DEVICE_MAX_CONNECTIONS before CUDA starts (0: leave it)")


def connections(args):
    # The driver reads it once, when PyTorch's first CUDA call makes the context:
    # set any later, it would change nothing, silently.
    if args.connections:
        os.environ["CUDA_DEVICE_MAX_CONNECTIONS"] = str(args.connections)


lab = Lab("torch_lab07", "a stream pool from PyTorch: many small requests, one stream or P", reps=5, quick_reps=3,
          options=options, before_torch=connections)
torch = lab.torch
torch.backends.cuda.matmul.allow_tf32 = False
n, T, P = 32, (1 if lab.args.quick else 2), lab.args.pool
queues = int(os.environ.get("CUDA_DEVICE_MAX_CONNECTIONS", "8"))  # read by the driver at context creation
served = torch.zeros(n, dtype=torch.int64, device="cuda")  # each request counts itself, in its stream
runs = {n: 0, 8: 0}  # serve() calls per request count

lab.say("\nThe pool PyTorch keeps")
first = torch.cuda.Stream()
handles = [first.cuda_stream] + [torch.cuda.Stream().cuda_stream for _ in range(32)]
lab.setup("distinct handles in 33 Stream() calls", len(set(handles)), "32: PyTorch's pool per priority")
lab.setup("33rd Stream() is the 1st", handles[32] == handles[0], "round robin: the pool wraps around")
lab.setup("CUDA_DEVICE_MAX_CONNECTIONS", queues, "hardware queues (8 unless set before the first CUDA call)")
pool = [first] + [torch.cuda.Stream() for _ in range(P - 1)]  # the next P-1 of the pool: P distinct streams


def serve(streams, request, count):
    """Queues COUNT requests, request(i) on stream i mod P, and returns at once."""
    for i in range(count):
        with torch.cuda.stream(streams[i % len(streams)]):
            request(i)
            served[i].add_(1)
    runs[count] += 1


def paired(request, streams, count):
    """Median one-stream and pool times, in pairs, each from an idle GPU to
    torch.cuda.synchronize() (the host clock: the work spans streams)."""
    one, many = [], []
    for rep in range(lab.args.reps + 1):  # the first pair is the warm-up
        a = lab.host_ms(lambda: serve(streams[:1], request, count))
        b = lab.host_ms(lambda: serve(streams, request, count))
        if rep:
            one.append(a), many.append(b)
    return median(one), median(many)


lab.say(f"\n{n} requests of {T} ms (one thread each): one stream, then a pool of {P}")
spin = lab.calibrate_spin()
w = min(P, queues)
one, many = paired(lambda i: spin(T), pool, n)
ideal = n / math.ceil(n / w)
lab.measured("one stream", one, "ms", n * T, "N x T")
lab.measured(f"pool of {P} streams", many, "ms", math.ceil(n / w) * T, "ceil(N / w) x T, w = min(P, queues)")
lab.measured("speedup", one / many, "x", ideal, "N / ceil(N / w)")

lab.say("\nEight kernels that each fill the GPU: one stream, then eight")
# Many waves per matmul (4096: ~8 of 128x128 tiles on 132 SMs), so the partly
# idle last wave, which a second stream could fill, is a few % of the time.
big = 4096 if lab.args.quick else 8192
A, B = torch.rand(big, big, device="cuda"), torch.rand(big, big, device="cuda")
out = [torch.empty(big, big, device="cuda") for _ in range(8)]
eight = [torch.cuda.Stream() for _ in range(8)]
one_w, many_w = paired(lambda i: torch.mm(A, B, out=out[i]), eight, 8)
lab.measured(f"8 matmuls {big}x{big}, speedup", one_w / many_w, "x", 1.0, "the SMs are all busy: no gain")
torch.cuda.synchronize()
expected = torch.tensor([runs[n] + runs[8] * (i < 8) for i in range(n)], device="cuda")
lab.check("every_request_served", int((served != expected).sum()), n, "requests not run once per run")
lab.verdict("pool_kernels_concurrent", one / many >= 0.8 * ideal,
            f"{one:.2f} ms / {many:.2f} ms = {one / many:.2f}x of the model's {ideal:.2f}x", "at least 80%")
lab.verdict("whole_gpu_kernels_not_concurrent", 0.9 <= one_w / many_w <= 1.1,
            f"{one_w:.2f} ms / {many_w:.2f} ms = {one_w / many_w:.2f}x", "1x within 10%")
lab.finish()
