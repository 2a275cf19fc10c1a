#!/usr/bin/env python3
"""torch_lab09: lab09's question through PyTorch. Which ordinary calls make the host wait?

lab09's catalogue, in PyTorch's own calls: K1, a calibrated torch.cuda._sleep
of K1 ms, goes to stream A, then the call (inside `with torch.cuda.stream(A)`,
as PyTorch puts an op on its current stream), then K2, 1 ms, on stream B.
The call's host time, with K1 running, beside the same call on an idle GPU
says whether the HOST WAITED (at least half of K1 more); if not, K2 ending
after K1 (events, on the GPU) says the GPU serialised; else neither. Each
call's state is prepared first on an idle GPU: torch.empty "cached" finds a
block freed in stream A, "fresh" follows an empty_cache() and reaches
cudaMalloc; empty_cache() finds a cached block to cudaFree.
Verdicts only on what PyTorch documents: .item(), .cpu(), torch.cuda.synchronize()
and tensor.nonzero() ("causes host-device synchronization") wait; Event.query()
does not. The rest is measured and shown: what this PyTorch and driver do.
Run: python3 labs/lab09_implicit_sync/torch_lab09.py [--quick] [--json] [--reps N]
"""
import io
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from torch_common import Lab, median  # noqa: E402

lab = Lab("torch_lab09", "the hidden waits of PyTorch: a call between a long kernel and a short one",
          reps=5, quick_reps=3)
torch = lab.torch
K1 = 5 if lab.args.quick else 20
A, B = torch.cuda.Stream(), torch.cuda.Stream()
MiB = 1 << 20
small, big = torch.arange(16.0, device="cuda"), torch.ones(MiB, device="cuda")  # 4 MiB
mask, pageable = (torch.arange(MiB, device="cuda") % 3 == 0), torch.ones(MiB)
sink, none = io.StringIO(), (lambda: None)


def cached_block():
    torch.empty(64 * MiB, dtype=torch.uint8, device="cuda")  # freed at once: a block cached in stream A


def query():
    e = torch.cuda.Event()
    e.record()  # in A, behind K1
    return e.query()


# the call, what prepares it, the call itself, and the verdict where PyTorch documents it (*_waits: the host waits)
CALLS = [(".item()", none, lambda: small[3].item(), "item_waits"),
         (".cpu()", none, lambda: big.cpu(), "cpu_waits"),
         ("print(t)", none, lambda: print(small, file=sink), None),
         ("torch.cuda.synchronize()", none, torch.cuda.synchronize, "synchronize_waits"),
         ("torch.cuda.empty_cache()", cached_block, torch.cuda.empty_cache, None),
         ("t.pin_memory()", none, lambda: pageable.pin_memory(), None),
         ("x.to('cuda', non_blocking=True)", none, lambda: pageable.to("cuda", non_blocking=True), None),
         ("torch.empty, cached", cached_block, cached_block, None),
         ("torch.empty, fresh", torch.cuda.empty_cache, lambda: torch.empty(96 * MiB, device="cuda"), None),
         ("t.zero_()", none, lambda: big.zero_(), None),
         ("t.nonzero()", none, lambda: mask.nonzero(), "nonzero_waits"),
         ("Event.query()", none, query, "event_query_no_wait")]


def once(prep, call, busy):
    """The call's host ms, and K1-start-to-K2-end on the GPU (ms)."""
    with torch.cuda.stream(A):
        prep()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    with torch.cuda.stream(A):
        start.record()
        spin(K1 if busy else 0.01)
        t0 = time.perf_counter()
        call()
        took = (time.perf_counter() - t0) * 1e3
    with torch.cuda.stream(B):
        spin(1)
        end.record()
    torch.cuda.synchronize()
    return took, start.elapsed_time(end)


lab.say(f"\nThe catalogue: K1 ({K1} ms) in A, the call, K2 (1 ms) in B")
spin = lab.calibrate_spin()
lab.say(f"  {'call':<34} {'outcome':<12} host ms: K1 running / idle   documented")
for name, prep, call, documented in CALLS:
    once(prep, call, False)  # warm-up: loads the op's kernels, fills caches
    idle = median(once(prep, call, False)[0] for _ in range(lab.args.reps))
    busy = [once(prep, call, True) for _ in range(lab.args.reps)]
    host, gpu = median(b[0] for b in busy), median(b[1] for b in busy)
    waited = host - idle >= K1 / 2
    outcome = "HOST WAITED" if waited else "GPU serial" if gpu >= K1 else "neither"
    says = documented and documented.endswith("_waits")
    said = "-" if documented is None else "waits" if says else "no wait"
    lab.doc.setdefault("calls", []).append({"call": name, "outcome": outcome, "host_ms": host, "idle_ms": idle,
                                            "k2_end_ms": gpu, "documented": said})
    lab.say(f"  {name:<34} {outcome:<12} {host:8.2f} / {idle:5.2f}         {said}")
    if documented is not None:
        lab.verdict(documented, waited == says, f"{name}: {outcome}, {host:.2f} ms with K1, {idle:.2f} idle",
                    f"{'at least' if says else 'under'} K1/2 = {K1 / 2:g} ms more than idle")
lab.finish()
