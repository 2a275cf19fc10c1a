#!/usr/bin/env python3
"""torch_lab13: lab13's question through PyTorch. Does DDP's bucketed all-reduce hide behind the backward pass?

One process per GPU (torch.multiprocessing), torch.distributed over NCCL. A
model of L Linear layers; each step is forward + backward of one batch, and
the gradients are summed across the GPUs three ways:
  compute:  backward only (no_sync(): DDP reduces nothing): C;
  serial:   backward under no_sync(), then one all_reduce of every gradient
            (flattened into one buffer): C + t(G);
  DDP:      DistributedDataParallel(bucket_cap_mb=25): each bucket is
            all-reduced by a hook on its own stream while backward goes on.
Model: serial = C + t(G); DDP at best max(C, t(G)) + a bucket's t. The
verdict asks for at least a quarter of the modelled gain: DDP's hooks copy
gradients into buckets and NCCL's kernels share the SMs with backward, so
the model is an upper bound. DDP's averaged gradients are checked against
the serial all_reduce's sum / N, exactly (a sum of N floats from the same
ranks is the same in any order when N = 2; for more, within 1e-6).
NCCL_NVLS_ENABLE=0 is set before NCCL starts (lab13's handout says why).
Needs two GPUs: on one it says so and exits 3.
Run: python3 labs/lab13_gradient_overlap/torch_lab13.py [--quick] [--json] [--reps N]
"""
import json
import os
import socket
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from torch_common import Lab, cannot_run, median  # noqa: E402


def no_multicast(args):
    os.environ["NCCL_NVLS_ENABLE"] = "0"  # before any NCCL call, in every process


BUCKET_MB = 25


def shape(quick):
    """LAYERS, WIDTH, BATCH."""
    return (12, 2048, 2048) if quick else (24, 2048, 4096)


def step_ms(torch, fn):
    torch.cuda.synchronize()
    start = time.perf_counter()
    fn()
    torch.cuda.synchronize()
    return (time.perf_counter() - start) * 1e3


def worker(rank, world, port, reps, quick, out):
    # spawned: this process imported the file afresh, as __mp_main__, without running main
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP
    LAYERS, WIDTH, BATCH = shape(quick)
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world)
    torch.manual_seed(1234 + rank)  # each rank its own batch; the same weights below
    torch.backends.cuda.matmul.allow_tf32 = False
    model = torch.nn.Sequential(*[torch.nn.Linear(WIDTH, WIDTH) for _ in range(LAYERS)]).cuda()
    for p in model.parameters():
        dist.broadcast(p.data, 0)
    ddp = DDP(model, device_ids=[rank], bucket_cap_mb=BUCKET_MB)
    x = torch.randn(BATCH, WIDTH, device="cuda")
    params = list(model.parameters())
    flat = torch.empty(sum(p.numel() for p in params), device="cuda")

    def compute():
        with ddp.no_sync():
            ddp(x).square().mean().backward()

    def serial():
        compute()
        torch.cat([p.grad.flatten() for p in params], out=flat)
        dist.all_reduce(flat)

    def overlapped():
        ddp(x).square().mean().backward()

    ways = {"compute": compute, "serial": serial, "ddp": overlapped}
    times = {k: [] for k in ways}
    for rnd in range(reps + 1):  # the first round is the warm-up
        order = list(ways)[rnd % 3:] + list(ways)[:rnd % 3]
        for k in order:
            model.zero_grad(set_to_none=False)
            ms = step_ms(torch, ways[k])
            if rnd:
                times[k].append(ms)
    allreduce = [step_ms(torch, lambda: dist.all_reduce(flat)) for _ in range(reps + 1)][1:]
    model.zero_grad(set_to_none=False)
    serial()
    want = flat / world
    model.zero_grad(set_to_none=False)
    overlapped()
    got = torch.cat([p.grad.flatten() for p in params])
    wrong = int((got - want).abs().gt(0 if world == 2 else 1e-6 * want.abs().max()).sum())
    if rank == 0:
        with open(out, "w") as f:
            json.dump({"times": times, "allreduce": allreduce, "wrong": wrong, "total": got.numel(),
                       "grad_mib": flat.numel() * 4 / 2**20}, f)
    dist.destroy_process_group()


if __name__ == "__main__":
    lab = Lab("torch_lab13", "DDP's gradient buckets overlapped with the backward pass, over NCCL",
              reps=7, quick_reps=3, before_torch=no_multicast)
    torch = lab.torch
    if torch.cuda.device_count() < 2:
        cannot_run("torch_lab13", "cannot show the overlap here: needs 2 GPUs "
                   f"(PyTorch sees {torch.cuda.device_count()})")
    if not torch.distributed.is_available() or not torch.distributed.is_nccl_available():
        cannot_run("torch_lab13", f"PyTorch {torch.__version__} has no NCCL backend for torch.distributed")
    LAYERS, WIDTH, BATCH = shape(lab.args.quick)
    world = torch.cuda.device_count()
    with socket.socket() as s:  # a free port for the rendezvous
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with tempfile.TemporaryDirectory() as folder:
        out = os.path.join(folder, "rank0.json")
        torch.multiprocessing.spawn(worker, args=(world, port, lab.args.reps, lab.args.quick, out), nprocs=world, join=True)
        with open(out) as f:
            r = json.load(f)
    c, s_, d = (median(r["times"][k]) for k in ("compute", "serial", "ddp"))
    t = median(r["allreduce"])
    lab.setup("gpus", world, "one process per GPU, torch.distributed over NCCL (NCCL_NVLS_ENABLE=0)")
    lab.setup("gradients", f"{r['grad_mib']:.0f} MiB", f"{LAYERS} Linear({WIDTH}, {WIDTH}), batch {BATCH}, "
              f"bucket_cap_mb={BUCKET_MB}")
    lab.measured("backward alone (C)", c, "ms")
    lab.measured("all_reduce of every gradient t(G)", t, "ms")
    lab.measured("serial: backward, then all_reduce", s_, "ms", c + t, "C + t(G)")
    best = max(c, t) + t * BUCKET_MB / r["grad_mib"]
    lab.measured("DDP: buckets during backward", d, "ms", best, "max(C, t(G)) + one bucket")
    lab.check("ddp_gradients_verified", r["wrong"], r["total"],
              "DDP gradients differ from the serial all_reduce's sum / N")
    model, speedup = (c + t) / best, s_ / d
    lab.verdict("ddp_overlap_gains", speedup >= 1 + 0.25 * (model - 1),
                f"serial {s_:.2f} ms, DDP {d:.2f} ms: {speedup:.2f}x (model at best {model:.2f}x)",
                "at least a quarter of the modelled gain")
    lab.finish()
