#!/usr/bin/env python3
"""Check a Chrome Trace Event file written by --trace, independently of the C
code that wrote it.

  trace_check.py validate FILE          Trace Event Format rules; prints the event count
  trace_check.py spans FILE             the variant spans, one name a line
  trace_check.py overlap FILE SPAN A B  within SPAN, the share (0..1) of the time an
                                        operation of category A ran while one of
                                        category B ran on another stream, over the
                                        time A ran: e.g. kernel kernel, h2d kernel
  trace_check.py flows FILE             each flow arrow (a GPU wait), one a line:
                                        "FROM -> TO<TAB>GAP" (track names; GAP, in us,
                                        from the arrow's start to its end)
Flow arrows ("s" and "f" events of one id) must each lie inside an operation
of their track, which is where Perfetto and chrome://tracing bind them.
Categories: kernel, h2d, d2h, copy, memset. Exits 1 with the reason on a bad file.
"""
import json
import sys

CATEGORIES = {"kernel", "h2d", "d2h", "copy", "memset", "sync", "variant"}


def fail(msg):
    print(f"trace_check: {msg}", file=sys.stderr)
    sys.exit(1)


def load(path):
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        fail(f"{path}: {e}")
    events = doc.get("traceEvents") if isinstance(doc, dict) else None
    if not isinstance(events, list):
        fail(f"{path}: no traceEvents array")
    named = {}
    for e in events:
        if not isinstance(e, dict) or e.get("ph") not in ("X", "M", "s", "f"):
            fail(f"{path}: an event with ph other than X, M, s or f: {e}")
        if not isinstance(e.get("pid"), int) or not isinstance(e.get("name"), str):
            fail(f"{path}: an event without integer pid or string name: {e}")
        if e["ph"] == "M":
            if e["name"] not in ("process_name", "thread_name", "thread_sort_index"):
                fail(f"{path}: unknown metadata event {e['name']}")
            if e["name"] == "thread_name":
                named[e["tid"]] = e["args"]["name"]
        elif e["ph"] in ("s", "f"):
            if not isinstance(e.get("id"), int) or not isinstance(e.get("tid"), int) or \
                    not isinstance(e.get("ts"), (int, float)):
                fail(f"{path}: a flow event without integer id and tid and a ts: {e}")
            if e["ph"] == "f" and e.get("bp") != "e":
                fail(f"{path}: a flow end not bound to its enclosing slice (bp e): {e}")
        else:
            for key in ("ts", "dur"):
                if not isinstance(e.get(key), (int, float)) or e[key] < 0:
                    fail(f"{path}: {key} missing or negative: {e}")
            if not isinstance(e.get("tid"), int):
                fail(f"{path}: tid is not an integer: {e}")
            if e.get("cat") not in CATEGORIES:
                fail(f"{path}: unknown category {e.get('cat')}")
    for e in events:
        if e["ph"] == "X" and e["tid"] not in named:
            fail(f"{path}: track {e['tid']} has no thread_name")
    slices = [e for e in events if e["ph"] == "X"]
    ends = {}
    for e in events:
        if e["ph"] in ("s", "f"):
            if not any(x["tid"] == e["tid"] and x["ts"] < e["ts"] < x["ts"] + x["dur"]
                       for x in slices):
                fail(f"{path}: a flow event inside no operation of its track: {e}")
            if e["id"] in ends.setdefault(e["ph"], {}):
                fail(f"{path}: two '{e['ph']}' events of flow {e['id']}")
            ends[e["ph"]][e["id"]] = e
    starts, finishes = ends.get("s", {}), ends.get("f", {})
    if set(starts) != set(finishes):
        fail(f"{path}: flows without both ends: {sorted(set(starts) ^ set(finishes))}")
    FLOWS[:] = [(named[starts[i]["tid"]], named[finishes[i]["tid"]],
                 finishes[i]["ts"] - starts[i]["ts"]) for i in sorted(starts)]
    return slices


FLOWS = []  # (from track, to track, gap in us), filled by load()


def span(events, name):
    found = [e for e in events if e["cat"] == "variant" and e["name"] == name]
    if not found:
        fail(f"no span named {name}")
    return found[0]["ts"], found[0]["ts"] + found[0]["dur"]


def clip(e, lo, hi):
    return max(e["ts"], lo), min(e["ts"] + e["dur"], hi)


def overlap(events, name, cat_a, cat_b):
    lo, hi = span(events, name)
    a_ops = [(clip(e, lo, hi), e["tid"]) for e in events if e["cat"] == cat_a]
    b_ops = [(clip(e, lo, hi), e["tid"]) for e in events if e["cat"] == cat_b]
    a_ops = [(iv, tid) for iv, tid in a_ops if iv[0] < iv[1]]
    ran = sum(e - s for (s, e), _ in a_ops)
    if ran == 0:
        fail(f"no {cat_a} ran inside span {name}")
    together = 0.0
    for (s, e), tid in a_ops:
        # the union of B intervals on other tracks, intersected with [s, e)
        parts = sorted((max(s, bs), min(e, be)) for (bs, be), btid in b_ops
                       if btid != tid and max(s, bs) < min(e, be))
        end = s
        for ps, pe in parts:
            if pe > end:
                together += pe - max(ps, end)
                end = pe
    return together / ran


def main(argv):
    if len(argv) < 3 or argv[1] not in ("validate", "spans", "overlap", "flows"):
        fail(__doc__)
    events = load(argv[2])
    if argv[1] == "validate":
        print(len(events))
    elif argv[1] == "flows":
        for source, target, gap in FLOWS:
            print(f"{source} -> {target}\t{gap:.3f}")
    elif argv[1] == "spans":
        for e in events:
            if e["cat"] == "variant":
                print(e["name"])
    else:
        if len(argv) != 6:
            fail(__doc__)
        print(f"{overlap(events, argv[3], argv[4], argv[5]):.4f}")


if __name__ == "__main__":
    main(sys.argv)
