#!/usr/bin/env python3
"""torch_lab11: lab11's question through PyTorch. How many DataLoader workers keep the GPU busy?

B batches, each prepared on the CPU by a Dataset's __getitem__ (P ms of real
work: rounds of x = x * A + B mod 2^32 over 1 MiB of int64 words made from the
batch's number and the run's seed; not a sleep, so workers need cores), then
copied to the GPU (pin_memory=True, .to(non_blocking=True)) and stepped on:
the step recomputes what the batch must hold, counts the words that differ
(on the GPU, no host sync) and spins K ms (torch.cuda._sleep). Four ways:
  serial:         num_workers=0, torch.cuda.synchronize() after each step: B(P+O+C+K);
  num_workers=0:  no sync: the main thread prepares batch i+1 while the GPU
                  steps on batch i: P+O + B max(P+O, C+K), O the main
                  thread's own time a batch (loader, pinning, launches);
  num_workers=2, 4: worker processes prepare batches ahead (persistent, warmed
                  up outside the timing: starting them costs far more than a
                  run here): F + B max(P/w, O, C+K), F the first batch's
                  arrival as measured: P, and the loader's start on top.
The GPU's busy share is the steps' durations, from CUDA events around each
step, over the run's time on the host clock. Each way's model takes P as its
own preparations took (__getitem__ times itself), as lab11 does: on a virtual
machine a core's speed moves by a third, and the calibrated P with it. A DataLoader, not a thread and a
pinned ring by hand: with persistent workers and pin_memory=True it is the
pattern as students meet it, and its pinned batches come from PyTorch's caching
host allocator, which reuses a buffer only after the copy out of it has run
(lab11's slot hand-off, done for you).
Run: python3 labs/lab11_host_feeding/torch_lab11.py [--quick] [--json] [--reps N]
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from torch_common import Lab, median  # noqa: E402

lab = Lab("torch_lab11", "feeding the GPU from PyTorch: DataLoader workers and pinned batches",
          reps=3, quick_reps=2)
torch = lab.torch
from torch.utils.data import DataLoader, Dataset  # noqa: E402

torch.set_num_threads(1)  # a batch on one core, as in a DataLoader worker (it sets 1 too)
# P and K twice lab11's: what Python adds a batch beyond the model (the loader's
# hand-off from a worker, pinning, unpickling: 0.5-1.3 ms a batch on an H100's
# host, 2026-11-23) stays near a tenth of a step, inside workers_keep_gpu_busy's
# 15%.
B, P, K = (12, 8.0, 4.0) if lab.args.quick else (32, 8.0, 4.0)
N = 2**17                 # int64 words: 1 MiB a batch, so pinning it and handing it
                          # between processes stay small beside P
A, INC, MASK = 1664525, 1013904223, 0xFFFFFFFF


def first_words(seed, b, device):
    """The batch's number and the run's seed in every word, before its rounds."""
    i = torch.arange(N, dtype=torch.int64, device=device)
    return (i * 0x85EBCA6B + ((seed ^ (b * 0x9E3779B9)) & MASK)) & MASK


class Batches(Dataset):
    """Batch (seed, b): `rounds` rounds of the affine map spread over its words,
    the first `rounds % N` words one more, so any amount of work is possible."""
    rounds = 0

    def __len__(self):
        return B

    def __getitem__(self, key):
        seed, b = key
        t0 = time.perf_counter()
        x = first_words(seed, b, "cpu")
        for _ in range(self.rounds // N):
            x.mul_(A).add_(INC).bitwise_and_(MASK)
        x[:self.rounds % N].mul_(A).add_(INC).bitwise_and_(MASK)
        return x, (time.perf_counter() - t0) * 1e3  # the batch, and what preparing it took


def composed(r):
    """r rounds as one map x -> a x + c (mod 2^32)."""
    a, c = 1, 0
    for _ in range(r):
        a, c = a * A & MASK, (c * A + INC) & MASK
    return a, c


data = Batches()
keys = []                 # (seed, b) for each batch of the next run; refilled in place
wrong = torch.zeros((), dtype=torch.int64, device="cuda")
spin = lab.calibrate_spin()


def calibrate():
    """rounds for about P ms of __getitem__ on this core: two points, then measured."""
    def ms(rounds):
        data.rounds = rounds
        data[(12345, 99)]  # a first call pays the allocator's first touch: untimed
        times = []
        for b in range(5):
            t0 = time.perf_counter()
            data[(12345, b)]
            times.append((time.perf_counter() - t0) * 1e3)
        return median(times)
    none, some = ms(0), ms(16 * N)
    data.rounds = max(0, int((P - none) / ((some - none) / (16 * N)))) if some > none else 0
    return ms(data.rounds)


def expected_maps():
    """Per word, the map its rounds compose into, x -> a x + c, as (a's low 16
    bits, a's high 16 bits, c) on the GPU. Made once: the calibration fixes the rounds."""
    q, rem = divmod(data.rounds, N)
    (a0, c0), (a1, c1) = composed(q), composed(q + 1)
    more = torch.arange(N, device="cuda") < rem
    a = torch.where(more, a1, a0)
    return a & 0xFFFF, a >> 16, torch.where(more, c1, c0)


def step(x, seed, b, events):
    """The GPU's step on batch b: copy, check every word, spin K ms."""
    g = x.to("cuda", non_blocking=True)
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    x0 = (base + ((seed ^ (b * 0x9E3779B9)) & MASK)) & MASK  # first_words(seed, b), on the GPU
    want = (x0 * a_lo + (((x0 * a_hi) & 0xFFFF) << 16) + c_of) & MASK  # a x0 + c mod 2^32
    wrong.add_((g != want).sum())
    spin(K)
    end.record()
    events.append((start, end))


def run(loader, sync_each):
    """One run on fresh batches: (ms, the GPU's busy share, the median
    preparation's ms as __getitem__ timed it, in whichever process ran it,
    the main thread's own ms a batch, the first batch's arrival in ms)."""
    seed = int.from_bytes(os.urandom(3), "little")
    keys[:] = [(seed, b) for b in range(B)]
    events, preps, rest, arrived = [], [], [], []

    def work():
        t = start = time.perf_counter()
        for b, (x, prep) in enumerate(loader):
            if not b:  # the GPU has nothing to do until now
                arrived.append((time.perf_counter() - start) * 1e3)
            preps.append(prep)
            step(x, seed, b, events)
            if sync_each:
                torch.cuda.synchronize()
            # the main thread's time for this batch beyond __getitem__: the
            # loader, pinning, the step's launches (and, serial, the wait)
            rest.append((time.perf_counter() - t) * 1e3 - (prep if loader.num_workers == 0 else 0))
            t = time.perf_counter()
    total = lab.host_ms(work)
    return (total, sum(s.elapsed_time(e) for s, e in events) / total, median(preps), median(rest),
            arrived[0])


p_ms = calibrate()
base = torch.arange(N, dtype=torch.int64, device="cuda") * 0x85EBCA6B  # below 2^51
a_lo, a_hi, c_of = expected_maps()  # a in 16-bit halves: a x0 without int64 overflow
x = data[(1, 0)][0].pin_memory()
c_ms = lab.median_ms(lambda: x.to("cuda", non_blocking=True))
# the cores this process may run on (its affinity: a batch job's share), not the machine's
cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
lab.setup("cpu_cores", cores, "w workers prepare at most min(w, cores) batches at once")
lab.setup("prep_ms", round(p_ms, 3), f"P: one batch's __getitem__ on one core ({data.rounds} rounds)")
lab.setup("copy_ms", round(c_ms, 3), "C: one batch's copy from pinned memory")
ways = {"serial": (0, True), "num_workers=0": (0, False), "num_workers=2": (2, False),
        "num_workers=4": (4, False)}
loaders = {name: DataLoader(data, sampler=keys, batch_size=None, num_workers=w, pin_memory=True,
                            persistent_workers=w > 0) for name, (w, _) in ways.items()}


def model_ms(name, p, o, f):
    """The way's model with P = p, what its preparations took (as lab11 does:
    on a shared or virtual machine a core's speed moves, and the calibrated P
    with it), O = o, the main thread's own time a batch (the loader,
    pinning, launches: Python's share, which lab11's C loop hardly has), and,
    with workers, F = f, the first batch's arrival: P, and 3.3-6.8 ms more
    in four runs with four workers on an H100 and an H200, 2026-11-24 (a
    persistent worker's new pass begins with a message to each worker and
    its answer, and a worker just woken may prepare its first batch slower:
    the two are not measured apart)."""
    w, sync_each = ways[name]
    if sync_each:
        return B * (p + o + c_ms + K)
    if w == 0:
        return p + o + B * max(p + o, c_ms + K)
    return f + B * max(p / min(w, cores), o, c_ms + K)


lab.say(f"\n{B} batches: P {p_ms:.2f} ms on the CPU, C {c_ms:.3f} ms, K {K:g} ms on the GPU")
samples = {name: [] for name in ways}
for rep in range(lab.args.reps + 1):  # the first round warms up, and starts the workers
    for name in ways:
        result = run(loaders[name], ways[name][1])
        if rep:
            samples[name].append(result)
total = {n: median(s[0] for s in samples[n]) for n in ways}
busy = {n: median(s[1] for s in samples[n]) for n in ways}
prep = {n: median(s[2] for s in samples[n]) for n in ways}
arrival = {n: median(s[4] for s in samples[n]) for n in ways}  # F
o_ms = median(s[3] for s in samples["num_workers=0"])  # no wait in it: the main thread's own
lab.say("P as each way's preparations took: " +
        ", ".join(f"{n} {prep[n]:.2f} ms" for n in ways) + f" (calibrated {p_ms:.2f}); "
        f"O, the main thread's own time a batch (num_workers=0): {o_ms:.2f} ms")
lab.say("F, the first batch's arrival: " + ", ".join(f"{n} {arrival[n]:.2f} ms" for n in ways) +
        " (with workers, P and the loader's start: paid once a pass)")
for name in ways:
    model = model_ms(name, prep[name], o_ms, arrival[name])
    lab.measured(f"{name}: run", total[name], "ms", model,
                 "B(P+O+C+K)" if ways[name][1] else
                 "P+O + B max(P+O, C+K)" if ways[name][0] == 0 else "F + B max(P/w, O, C+K)")
    lab.measured(f"{name}: GPU busy", 100 * busy[name], "%", 100 * B * K / model, "B K / the model's time")
lab.check("every_batch_right", int(wrong), N * B * len(ways) * (lab.args.reps + 1),
          "words differ from what __getitem__ wrote for their batch (counted on the GPU)")
# Does the main thread prepare batch i+1 while the GPU steps on batch i? Its
# own time a batch beyond __getitem__ says, round by round (the two ways of
# one round run back to back): serial it waits out each step, O + C + K;
# without the sync only O, the step left to the GPU while the thread goes on
# to the next batch. The difference over the step, C + K, is 1 when the
# thread overlaps and 0 when it waits: at least 0.5, no upper limit. The run
# totals, printed beside their models above, say what the overlap saved.
# Medians of batches, not the runs' totals: a host busy for a moment moves a
# run's total (on a fresh H100, 2026-11-24, one read x1.22 of its model, near
# serial's, and missed the total's x1.15 limit), a median of batches hardly.
pairs = list(zip(samples["serial"], samples["num_workers=0"]))
hidden = median((s[3] - w[3]) / (c_ms + K) for s, w in pairs)
waits = median(s[3] for s in samples["serial"])
lab.verdict("main_thread_overlaps", hidden >= 0.5,
            f"the main thread's own time a batch: serial {waits:.2f} ms, num_workers=0 {o_ms:.2f} ms: "
            f"x{hidden:.2f} of the {c_ms + K:.2f} ms step hidden behind the next batch's preparation "
            f"(runs: serial {total['serial']:.1f} ms, num_workers=0 {total['num_workers=0']:.1f} ms)",
            "at least x0.5 of the step")
# The model charges the loader's start as measured (F), so the share alone
# would pass a loader whose start idles the GPU for any time (workers started
# afresh each pass, without persistent_workers, cost far more than a pass
# here). The start beyond a batch's preparation, F - P, is held to a quarter
# of the steady state's B max(P/w, O, C+K): 12 ms at --quick, 32 ms at
# default sizes, against the 3.3-6.8 ms measured (model_ms).
m4 = model_ms("num_workers=4", prep["num_workers=4"], o_ms, arrival["num_workers=4"])
four = busy["num_workers=4"] / (B * K / m4)
late = arrival["num_workers=4"] - prep["num_workers=4"]  # F - P
steady = m4 - arrival["num_workers=4"]
lab.verdict("workers_keep_gpu_busy", 0.85 <= four <= 1.15 and late <= steady / 4,
            f"num_workers=4: the GPU busy {100 * busy['num_workers=4']:.1f}%, x{four:.2f} of the model's "
            f"{100 * B * K / m4:.1f}% (num_workers=0: {100 * busy['num_workers=0']:.1f}%); the loader's "
            f"start {late:.1f} ms beyond a batch's preparation, against the steady state's {steady:.1f} ms",
            "x0.85 to x1.15 of the model, the start at most a quarter of the steady state")
lab.finish()
