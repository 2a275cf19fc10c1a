"""Figure 8: lab11's loaders as a Gantt chart of the GPU's stream: the
serial loader (prepare, copy, step, wait: the GPU idles while the host
prepares the next batch) above 4 producer threads filling a ring of pinned
buffers (the steps follow each other), on the same time axis, each from the
start of its run. A grey row marks the GPU's idle time. The title gives the
busy fraction lab11's model predicts for each, as its report prints it."""
import re

from matplotlib.patches import Patch

import style
from data import DataError, Trace
from gantt import draw_rows, finish, require

NAME = "8-lab11-loaders.png"
TRACE = "lab11-trace.json"
REPORT = "lab11-trace.txt"    # the traced run's report (make results keeps it)
WAYS = ("serial", "4 producers")  # lab11's span names, as its report names the ways
IDLE = "#DDDDDD"
STEP = "feed_step"            # kernels/feed.cu: a batch's step on the GPU


def model_busy(results):
    """{way: predicted busy %} from the report's `WAY gpu_busy predicted P
    measured M %` lines; {} when the report is not there."""
    if not results.has(REPORT):
        return {}
    text = open(results.path(REPORT), errors="replace").read()
    found = {}
    for way in WAYS:
        m = re.search(rf"^\s*{re.escape(way)}\s+gpu_busy\s+predicted\s+([0-9.]+)\s", text, re.M)
        if m:
            found[way] = float(m.group(1))
    return found


def run_of(trace, way):
    """The span's copies and steps on the GPU, and the span."""
    span = trace.span(way)
    ops = [o for o in trace.ops if span["start"] <= o["start"] < span["end"]
           and (o["name"] == STEP or o["cat"] == "h2d" and o["name"].endswith("MiB"))]
    if not any(o["name"] == STEP for o in ops):
        raise DataError(f"{trace.path}: variant '{way}' has no {STEP} kernels")
    return span, sorted(ops, key=lambda o: o["start"])


def idle(span, ops):
    """The GPU's gaps, from the run's start to its last step's end."""
    gaps, at = [], span["start"]
    for o in ops:
        if o["start"] > at:
            gaps.append({"start": at, "end": o["start"]})
        at = max(at, o["end"])
    return gaps


def draw(results, out):
    require(results, TRACE, "lab11-trace", "lab11 --quick --trace")
    trace = Trace(results.path(TRACE))
    runs = [(way,) + run_of(trace, way) for way in WAYS]
    model = model_busy(results)
    fig, axes = style.figure(12, 4.6, nrows=2, sharex=True)
    said = []
    for ax, (way, span, ops) in zip(axes, runs):
        draw_rows(ax, trace, ops, lambda o: style.STAGE["kernel" if o["name"] == STEP else "h2d"],
                  span["start"], extra=[("GPU idle", idle(span, ops), lambda o: IDLE)])
        length = max(o["end"] for o in ops) - span["start"]
        busy = 100 * sum(o["end"] - o["start"] for o in ops if o["name"] == STEP) / length
        predicted = f"model {model[way]:.1f}%" if way in model else f"no model: no {REPORT}"
        said.append(f"{way} {predicted}")
        ax.set_title(f"{way}: {length / 1e3:.1f} ms, the GPU stepping {busy:.1f}% of it "
                     f"({predicted})", loc="left", fontsize=11.5)
        ax.axvline(length / 1e3, color="black", linewidth=1, linestyle="--")
    axes[-1].set_xlabel("time since the run began: the host prepares the first batch (ms)")
    handles = [Patch(color=style.STAGE["h2d"], label="a batch's copy (H2D)"),
               Patch(color=style.STAGE["kernel"], label="its step (kernel)"),
               Patch(color=IDLE, label="the GPU idle")]
    axes[-1].legend(handles=handles, loc="center right", fontsize=10)
    title = ("lab11: the GPU's busy share, serial loader vs 4 producers; model "
             + ", ".join(f"{w} {model[w]:.1f}%" for w in WAYS if w in model)
             if model else "lab11: the GPU's stream, serial loader vs 4 producers")
    path = finish(fig, trace, results, out, NAME, "one run of each, after the timed rounds",
                  title)
    return path, f"{WAYS[0]} above {WAYS[1]}; " + ", ".join(said)
