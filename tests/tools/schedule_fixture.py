#!/usr/bin/env python3
"""STAND-INS for the traces of figures 11-14, made without a GPU: writes
solNN-trace.json and solNN-trace.csv (NN: 01, 04, 06, 08) into a folder, as
`solNN --quick --csv --trace solNN-trace.json` would, but simulated.

  tests/tools/schedule_fixture.py OUT_FOLDER

Each is the solution's schedule under its exercise's model, played by a
small simulator: an activity starts once the host has issued it, its stream
is free, what it waits for (an event, or in ex04 its engine) has ended. The
times are the --quick settings' and the lab's H100 numbers (each named
below); every run ends in a cudaDeviceSynchronize, as the given programs'
do, and each level's span holds one of the program's own baseline runs
before the solution's, so that the figure has to find the right one. The
JSON says "stand_in" in otherData, which the figure's title repeats, and
the CSV a parameter row stand_in: replace both with a real run
(gpu-schedfig.sh, then the lead's unpack script) before trusting a number.
"""
import json
import os
import sys

LEGACY, HOST = 7, 0x7fffffff
ISSUE_US = 4.0  # the host's time to issue one call (lab08's launches: microseconds)


class Run:
    """The activities of one run, simulated in the order they are issued."""

    def __init__(self, t0, engines=False):
        self.t, self.ops, self.flows, self.engines = t0, [], [], engines
        self.waits = []  # the host's waits inside the run (cudaStreamSynchronize)
        self.stream_free, self.engine_free = {}, {}

    def issue(self, stream, cat, name, dur_us, after=()):
        """Issues an activity; `after`: activities of other streams it waits
        for (an event), each a flow arrow. Returns it."""
        self.t += ISSUE_US
        start = max([self.t, self.stream_free.get(stream, 0)] + [a["end"] for a in after] +
                    ([self.engine_free.get(cat, 0)] if self.engines else []))
        op = {"stream": stream, "cat": cat, "name": name, "start": start, "end": start + dur_us}
        self.stream_free[stream] = op["end"]
        self.engine_free[cat] = op["end"]
        self.ops.append(op)
        for a in after:
            self.flows.append((a, op))
        return op

    @property
    def end(self):
        return max(o["end"] for o in self.ops)


class Trace:
    def __init__(self, program):
        self.program, self.streams, self.spans, self.ops, self.flows, self.waits = (
            program, {}, [], [], [], [])
        self.t = 1000.0

    def stream(self, sid, name):
        self.streams[sid] = name
        return sid

    def span(self, name, runs):
        """runs: functions, each given a start time and returning its Run."""
        start = self.t
        for make in runs:
            run = make(self.t + 20)
            self.ops += run.ops
            self.flows += run.flows
            self.waits += run.waits
            self.waits.append({"name": "cudaDeviceSynchronize", "start": run.t,
                               "end": run.end + 3})
            self.t = run.end + 30
        self.spans.append({"name": name, "start": start, "end": self.t})
        self.t += 200

    def write(self, path):
        ev = [{"ph": "M", "pid": 1, "name": "process_name", "args": {"name": self.program}}]

        def track(tid, name, order):
            ev.append({"ph": "M", "pid": 1, "tid": tid, "name": "thread_name",
                       "args": {"name": name}})
            ev.append({"ph": "M", "pid": 1, "tid": tid, "name": "thread_sort_index",
                       "args": {"sort_index": order}})
        track(0, "variants", 0)
        track(HOST, "host waits", 1 << 30)
        for i, (sid, name) in enumerate(sorted(self.streams.items())):
            track(sid + 1, name, i + 1 if not name.startswith("unnamed") else 1000 + sid)
        for s in self.spans:
            ev.append({"ph": "X", "pid": 1, "tid": 0, "name": s["name"], "cat": "variant",
                       "ts": round(s["start"], 3), "dur": round(s["end"] - s["start"], 3)})
        for o in self.ops:
            ev.append({"ph": "X", "pid": 1, "tid": o["stream"] + 1, "name": o["name"],
                       "cat": o["cat"], "ts": round(o["start"], 3),
                       "dur": round(o["end"] - o["start"], 3),
                       "args": {"stream": self.streams[o["stream"]]}})
        for w in self.waits:
            ev.append({"ph": "X", "pid": 1, "tid": HOST, "name": w["name"], "cat": "sync",
                       "ts": round(w["start"], 3), "dur": round(w["end"] - w["start"], 3)})
        for i, (a, b) in enumerate(self.flows):  # as common/trace.c: inside both
            for phase, op, at in (("s", a, a["end"] - 0.001), ("f", b, b["start"] + 0.001)):
                e = {"ph": phase, "id": i + 1, "pid": 1, "tid": op["stream"] + 1,
                     "ts": round(at, 3), "cat": "wait",
                     "name": "the GPU waits for an event (cudaStreamWaitEvent)"}
                if phase == "f":
                    e["bp"] = "e"
                ev.append(e)
        doc = {"displayTimeUnit": "ms",
               "otherData": {"program": self.program, "dropped_records": 0,
                             "stand_in": "tests/tools/schedule_fixture.py"},
               "traceEvents": ev}
        with open(path, "w") as f:
            json.dump(doc, f, indent=0)


def write_csv(path, program, rows):
    lines = ["lab,variant,metric,value,unit",
             f"{program},device,name,stand-in (no GPU): tests/tools/schedule_fixture.py,text",
             f"{program},parameter,stand_in,1,bool"]
    lines += [f"{program},{v},{m},{x:.6g},ms" for v, m, x in rows]
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def ex01(out):
    """--quick: 5 ms kernels (--kernel-ms); the legacy call spins 0 ns."""
    k = 5000.0
    t = Trace("sol01")
    blocking = [t.stream(1, "given stream 1"), t.stream(2, "given stream 2")]
    yours = [t.stream(3, "your stream 1"), t.stream(4, "your stream 2")]
    workers = [t.stream(5, "worker 0's stream"), t.stream(6, "worker 1's stream")]
    per_thread = [t.stream(8, "unnamed id 8"), t.stream(9, "unnamed id 9")]
    t.stream(LEGACY, "legacy default stream")

    def three(streams, barrier):
        def make(t0):
            r = Run(t0)
            k1 = r.issue(streams[0], "kernel", "spin_and_log", k)
            call = r.issue(LEGACY, "kernel", "spin_and_log", 3, [k1] if barrier else [])
            r.issue(streams[1], "kernel", "spin_and_log", k, [call] if barrier else [])
            r.flows = []  # the legacy stream's waits are implicit: no arrows in a trace
            return r
        return make
    t.span("given blocking, your streams, in turns", [three(blocking, True), three(yours, False)])
    t.span("level 2: per-thread default streams, your worker streams, in turns",
           [three(per_thread, True), three(workers, False)])
    t.write(os.path.join(out, "sol01-trace.json"))
    write_csv(os.path.join(out, "sol01-trace.csv"), "ex01",
              [("your streams", "predicted_time", k / 1e3),
               ("your worker streams", "predicted_time", k / 1e3)])


def ex04(out):
    """--quick: 8 batches of 8 MiB; lab04's H100 trace report: an 8 MiB upload
    157 us, a download 156 us, both at once 179 us (c'). Level one's kernel
    2h, level two's h; the solution's level two 4 streams of 4 chunks."""
    n, h, d, beside = 8, 157.0, 156.0, 179.0
    t = Trace("sol04")
    given = t.stream(1, "given stream 0")
    sets = [t.stream(20, "unnamed id 20"), t.stream(21, "unnamed id 21")]
    level2 = [t.stream(30 + s, f"level-2 stream {s}") for s in range(4)]

    def serial(k):
        def make(t0):
            r = Run(t0, engines=True)
            for _ in range(n):
                r.issue(given, "h2d", "H2D 8 MiB", h)
                r.issue(given, "kernel", "affine_work", k)
                r.issue(given, "d2h", "D2H 8 MiB", d)
            return r
        return make

    def pipelined(k, streams, chunks):
        def make(t0):
            r = Run(t0, engines=True)
            for j in range(n * chunks):
                s = streams[j % len(streams)]
                r.issue(s, "h2d", f"H2D {8 / chunks:g} MiB", h / chunks + 2)
                r.issue(s, "kernel", "affine_work", k / chunks + 2)
                r.issue(s, "d2h", f"D2H {8 / chunks:g} MiB", d / chunks + 2)
            return r
        return make
    t.span("your pipeline", [serial(2 * h), pipelined(2 * h, sets, 1)])
    t.span("your level-2 pipeline", [serial(h), pipelined(h, level2, 4)])
    t.write(os.path.join(out, "sol04-trace.json"))

    def ideal(k):  # lab04's: (h+k+d) + (n-1) max(c', k)
        return ((h + k + d) + (n - 1) * max(beside, k)) / 1e3
    write_csv(os.path.join(out, "sol04-trace.csv"), "ex04",
              [("your pipeline", "predicted_time", ideal(2 * h)),
               ("your level-2 pipeline", "predicted_time", ideal(h))])


def ex06(out):
    """4 MiB buffers (--size-mib), a 2 ms slow step (--spin-ms); at 50 GB/s a
    4 MiB copy takes about 80 us, affine_work on 1M words about 20 us. The
    ring (level two): 6 items, 2 slots, a quarter of the buffer each; the
    last run's consumer 5 times as slow as its producer."""
    spin, copy, f = 2000.0, 80.0, 20.0
    t = Trace("sol06")
    produce, consume = t.stream(1, "produce"), t.stream(2, "consume")

    def pipeline(t0):
        r = Run(t0)
        r.issue(produce, "h2d", "H2D 4 MiB", copy)
        r.issue(produce, "kernel", "spin_for_ns", spin)
        mid = r.issue(produce, "kernel", "affine_work", f)
        r.issue(consume, "kernel", "affine_work", f, [mid])
        r.issue(consume, "d2h", "D2H 4 MiB", copy)
        return r
    p, c, items, ring = spin, 5 * spin, 6, 2

    def ring_run(t0):
        r = Run(t0)
        read = {}
        for i in range(items):
            s = i % ring
            r.issue(produce, "h2d", "H2D 1 MiB", copy / 4, [read[s]] if i >= ring else [])
            r.issue(produce, "kernel", "spin_for_ns", p)
            written = r.issue(produce, "kernel", "affine_work", f / 4)
            r.issue(consume, "kernel", "spin_for_ns", c, [written])
            read[s] = r.issue(consume, "kernel", "affine_work", f / 4)
        return r
    t.span("your pipeline", [pipeline, pipeline])
    t.span("your ring", [ring_run])
    t.write(os.path.join(out, "sol06-trace.json"))
    write_csv(os.path.join(out, "sol06-trace.csv"), "ex06",
              [("pipeline", "last_run_predicted_time", spin / 1e3),
               ("ring", "last_run_producer_step", p / 1e3),
               ("ring", "last_run_consumer_step", c / 1e3),
               ("ring", "last_run_predicted_time", (p + c + (items - 1) * max(p, c)) / 1e3)])


def ex08(out):
    """--quick: 6 batches, three stages of times drawn in [0.5, 1.5) ms (here
    0.8, 1.2, 0.6); level two: 4 batches, the first 0.2 ms and the join
    0.15, each branch drawn per batch in [0.5, 1.5)."""
    n, stage = 6, (800.0, 1200.0, 600.0)
    t = Trace("sol08")
    streams = [t.stream(1 + s, f"stage {s}") for s in range(3)]
    four = [t.stream(10 + s, f"level-2 stage {s}") for s in range(4)]

    def host_chained(ss, times):
        def make(t0):
            r = Run(t0)
            for s, ms in zip(ss, times):
                r.issue(s, "kernel", "pipeline_stage", ms)
                r.waits.append({"name": "cudaStreamSynchronize", "start": r.t, "end": r.end + 3})
                r.t = r.end + 10  # the host waited
            return r
        return make

    def chained(t0):
        r = Run(t0)
        for b in range(n):
            before = None
            for s in range(3):
                before = r.issue(streams[s], "kernel", "pipeline_stage", stage[s],
                                 [before] if before else [])
        return r
    first, join = 200.0, 150.0
    a, b = (1100.0, 700.0, 1300.0, 900.0), (800.0, 1200.0, 600.0, 1400.0)

    def fork_join(t0):
        r = Run(t0)
        for k in range(4):
            f = r.issue(four[0], "kernel", "pipeline_stage", first)
            ka = r.issue(four[1], "kernel", "pipeline_join", a[k], [f])
            kb = r.issue(four[2], "kernel", "pipeline_join", b[k], [f])
            r.issue(four[3], "kernel", "pipeline_join", join, [ka, kb])
        return r
    t.span("rounds: host-chained and yours", [host_chained(streams, stage), chained])
    t.span("level 2: host-chained and yours", [host_chained(four, (first, a[0], b[0], join)),
                                                fork_join])
    t.write(os.path.join(out, "sol08-trace.json"))
    f_end = a_end = b_end = j_end = 0.0  # ex08's fork_join_ms, at these times
    for k in range(4):
        f_end += first
        a_end = max(a_end, f_end) + a[k]
        b_end = max(b_end, f_end) + b[k]
        j_end = max(j_end, a_end, b_end) + join
    write_csv(os.path.join(out, "sol08-trace.csv"), "ex08",
              [("your pipeline", "last_run_predicted_time",
                (sum(stage) + (n - 1) * max(stage)) / 1e3),
               ("your level-2 pipeline", "last_run_predicted_time", j_end / 1e3)])


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    os.makedirs(sys.argv[1], exist_ok=True)
    for make in (ex01, ex04, ex06, ex08):
        make(sys.argv[1])
