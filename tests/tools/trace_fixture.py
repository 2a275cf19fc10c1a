#!/usr/bin/env python3
"""Makes tests/fixtures/h100-lab{07,08,11}-trace.json from real H100 traces of
builds older than the spans that lab07, lab08 and lab11 now write under --trace.

  tests/tools/trace_fixture.py lab07 IN.json OUT.json   (./lab07 --trace, default run)
  tests/tools/trace_fixture.py lab08 IN.json OUT.json   (./lab08 --quick --trace)
  tests/tools/trace_fixture.py lab11 IN.json OUT.json   (./lab11 --quick --trace)

Those builds wrapped no run in a span, so this keeps two runs of the trace
and adds the span that the current lab puts around each. The runs are found
from the program's own schedule, not from what they look like:
measure_rounds (common/timing.c) runs k ways once as a warm-up, then in
rounds, way (j + step) % k at step `step` of round j.
  lab07 part 2: k = 2 (depth-first 0, breadth-first 1), 1 + 10 rounds; its
    kernels are the trace's one-block ones, 2n = 32 per run. Run 20 is
    breadth-first and run 21 depth-first (round 9: 1 then 0).
  lab08 part 1: k = 7, 1 + 3 rounds (--quick); each run starts with two
    H2D copies. Run 21 is event-chained (way 2) and run 27 host-chained
    (way 1) (round 2: 2 3 4 5 6 0 1).
  lab11 part 1: measure_ways, k = 4 (serial 0, 1, 2 and 4 producers 3),
    1 + 3 rounds (--quick), run r is way (r // 4 + r % 4) % 4; each run
    steps 16 batches (feed_step kernels) between feed_fresh's two small
    H2D copies on the legacy stream and feed_verify's two D2H. Run 12 is
    4 producers and run 13 serial (round 2: 3 0 1 2); a span runs from
    the end of its run's fresh inputs (the host then prepares the first
    batch) to the end of its last step.
Every event of the runs is kept as recorded; the rest is dropped.
"""
import json
import sys

PAD_US = 20  # lab07: the span begins and ends this long around its run's kernels


def lab07(events):
    kernels = sorted((e for e in events if e.get("cat") == "kernel" and
                      e["args"].get("detail", "").startswith("grid 1x1x1")), key=lambda e: e["ts"])
    runs = [kernels[i:i + 32] for i in range(0, len(kernels), 32)]
    assert len(runs) == 22, f"{len(runs)} runs of part 2, expected 22"
    return [("breadth-first", start(runs[20]) - PAD_US, end(runs[20]) + PAD_US),
            ("depth-first", start(runs[21]) - PAD_US, end(runs[21]) + PAD_US)]


def lab08(events):
    h2d = sorted((e for e in events if e.get("cat") == "h2d"), key=lambda e: e["ts"])
    firsts = h2d[0::2]  # each run copies its words, then its spans
    assert len(firsts) == 28, f"{len(firsts)} runs of part 1, expected 28"
    after = [e for e in events if e.get("cat") == "d2h"]
    spans = []
    for name, run in (("event-chained", 21), ("host-chained", 27)):
        begin, next_begin = firsts[run]["ts"], firsts[run + 1]["ts"] if run < 27 else None
        copies = [e for e in after if e["ts"] > begin and (next_begin is None or e["ts"] < next_begin)]
        spans.append((name, begin, max(end([c]) for c in copies[:2])))
    return spans


def lab11(events):
    steps = sorted((e for e in events if e["name"] == "feed_step"), key=lambda e: e["ts"])
    runs = [steps[i:i + 16] for i in range(0, len(steps), 16)]
    assert len(runs) == 16, f"{len(runs)} runs of part 1, expected 16"
    fresh = sorted((e for e in events if e.get("cat") == "h2d" and e["args"].get("bytes", 0) < 4096),
                   key=lambda e: e["ts"])
    spans = []
    for name, run in (("4 producers", 12), ("serial", 13)):
        begin = end([e for e in fresh if e["ts"] < start(runs[run])][-1:])
        spans.append((name, begin, end(runs[run]) + PAD_US))
    return spans


def start(run):
    return min(e["ts"] for e in run)


def end(run):
    return max(e["ts"] + e["dur"] for e in run)


def main(which, src, dst):
    doc = json.load(open(src))
    events = doc["traceEvents"]
    spans = {"lab07": lab07, "lab08": lab08, "lab11": lab11}[which](events)
    kept = [e for e in events if e["ph"] == "M" or
            any(b <= e["ts"] < f for _, b, f in spans)]
    for name, b, f in spans:
        kept.append({"ph": "X", "pid": 1, "tid": 0, "name": name, "cat": "variant",
                     "ts": round(b, 3), "dur": round(f - b, 3)})
    doc["traceEvents"] = kept
    doc.setdefault("otherData", {})["fixture"] = (
        f"runs of a real H100 trace, spans added by tests/tools/trace_fixture.py {which}")
    with open(dst, "w") as f:
        json.dump(doc, f, separators=(",", ":"))
        f.write("\n")


if __name__ == "__main__":
    main(*sys.argv[1:4])
