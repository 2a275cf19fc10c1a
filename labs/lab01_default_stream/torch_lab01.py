#!/usr/bin/env python3
"""torch_lab01: lab01's question through PyTorch. Is the legacy default stream a barrier there too?

Two kernels of 20 ms (torch.cuda._sleep, calibrated) go to two streams, and
between their launches one tiny op (tiny.add_(1)) goes to PyTorch's current
stream. Unless you change it, that is the default stream, handle 0: the
LEGACY default stream (PyTorch is built without --default-stream per-thread).
  (a) blocking streams (cuStreamCreate, flags 0, in torch.cuda.ExternalStream):
      the op waits for kernel 1, kernel 2 waits for the op: 40 ms, as lab01 (a);
  (b) torch.cuda.Stream(): PyTorch makes its pool streams cudaStreamNonBlocking
      (c10/cuda/CUDAStream.cpp), so the op holds nothing: 20 ms, as lab01 (b).
The host clock times each run from an idle GPU to torch.cuda.synchronize(), as
lab01 does: one stream's events cannot tell whether that stream ordered others.
Run: python3 labs/lab01_default_stream/torch_lab01.py [--quick] [--json] [--reps N]
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from torch_common import Driver, Lab, median  # noqa: E402

lab = Lab("torch_lab01", "the legacy default stream, seen from PyTorch: two streams, one op between",
          reps=5, quick_reps=3)
torch = lab.torch
ms = 5 if lab.args.quick else 20
cu = Driver()
tiny = torch.zeros(1, dtype=torch.int64, device="cuda")  # counts the ops that ran
runs = 0


def two_kernels_one_op(s1, s2, sleep):
    global runs
    with torch.cuda.stream(s1):
        sleep()
    tiny.add_(1)  # the current stream: the legacy default stream
    with torch.cuda.stream(s2):
        sleep()
    runs += 1


lab.say("\nThe streams PyTorch gives you")
ours = [torch.cuda.Stream(), torch.cuda.Stream()]
blocking = [torch.cuda.ExternalStream(cu.blocking_stream()) for _ in range(2)]
lab.setup("current stream handle", torch.cuda.current_stream().cuda_stream, "0: the legacy default stream")
lab.setup("torch.cuda.Stream() flags", cu.stream_flags(ours[0].cuda_stream), "1: cudaStreamNonBlocking")
lab.setup("cuStreamCreate flags", cu.stream_flags(blocking[0].cuda_stream), "0: blocking, as cudaStreamCreate")

# The trap of a first probe: a cold run, before any kernel is loaded. Under
# lazy module loading the first launch of _sleep and of add_ loads them,
# which may wait for the whole device. Run (b) cold, then the same warm.
lab.say("\nThe first run is not a measurement")
cycles = 10_000_000
cold = lab.host_ms(lambda: two_kernels_one_op(*ours, lambda: torch.cuda._sleep(cycles)))
warm = lab.host_ms(lambda: two_kernels_one_op(*ours, lambda: torch.cuda._sleep(cycles)))
lab.measured("(b) cold, first launches", cold, "ms")
lab.measured("(b) the same run, warm", warm, "ms")

lab.say("\nDoes the op on the legacy stream serialise the kernels?")
spin = lab.calibrate_spin()
times = {"a": [], "b": []}
for rep in range(lab.args.reps + 1):  # the first round is the warm-up
    for name, streams in (("a", blocking), ("b", ours)):
        t = lab.host_ms(lambda: two_kernels_one_op(*streams, lambda: spin(ms)))
        if rep:
            times[name].append(t)
a, b = median(times["a"]), median(times["b"])
lab.measured("(a) blocking streams", a, "ms", 2 * ms, "the sum of the kernels")
lab.measured("(b) torch.cuda.Stream()", b, "ms", ms, "the longest kernel")
torch.cuda.synchronize()
lab.check("every_op_ran", abs(int(tiny.item()) - runs), runs, "runs miscounted by the op on the legacy stream")
way = (a / b - 1) / (2 * ms / ms - 1)  # 0: overlapped, 1: serialised (lab01's rule)
lab.verdict("legacy_op_serialises_blocking_streams", way >= 0.8,
            f"(a) {a:.2f} ms / (b) {b:.2f} ms = {a / b:.2f}: {way:.0%} of the way from 1 to 2", "at least 80%")
lab.verdict("pytorch_streams_overlap", b <= 1.25 * ms,
            f"(b) {b:.2f} ms for two {ms} ms kernels", f"at most {1.25 * ms:g} ms, the longest kernel + 25%")
for s in blocking:
    cu.destroy_stream(s.cuda_stream)
lab.finish()
