"""Figures 11-14: the schedule of a solved exercise (ex01, ex04, ex06, ex08),
one panel per level: the reference solution's last run from its trace
(`solNN --quick --csv --trace`, which make results writes as
solNN-trace.json and solNN-trace.csv), one row per stream, with the run's
critical chain outlined and the model's bound, from the same run's report,
as a dashed line.

Which run. The exercises time each run from an idle GPU to a
cuda*Synchronize, so the ends of those host waits cut a level's span into
runs (Trace.runs). The solution's run is the last one whose every operation
is on the solution's streams (MINE below: the program's own runs, the
baselines, use streams of its own) and that uses two streams or more.

The critical chain (critical_chain). Start from the activity that ends
last: the run ends with it. Then, step by step, its predecessor is, of the
activities it may have waited for, the one whose end is the latest at or
before its start (within TOLERANCE_US); the walk stops at an activity that
waited for none. An activity may wait for
  - the activity before it in its stream: a stream runs in order;
  - the one a GPU wait (cudaStreamWaitEvent, a flow arrow in the trace)
    ties it to: ex06's and ex08's event hand-offs, in the direction the
    solution issued them, the write-after-read wait of ex06's ring included;
  - in ex04, the one before it on its engine (ENGINES): the model's three
    stages each have one (the upload engine, the SMs, which a batch's kernel
    fills, the download engine), and a batch's stage waits for the stage
    before it on that engine as much as for its own stream.
ex01 has none of the last two: its lesson is that nothing orders the
solution's streams, so its chain is one kernel.
Why this is the chain: in these schedules nothing starts on its own, every
activity starts when the last of what it waits for has ended (or when the
host issued it, which shows as a gap before it). Following the latest such
end backwards from the run's end gives the activities without which the
run could not have ended sooner: the model's path, and where the run
lost time against it, as gaps. TOLERANCE_US: CUPTI's stamps for two
activities that follow each other on one engine can overlap by a tick.

The bound is the model's time as the program reported it for the same run
(its --csv rows, MODEL below): for ex01 and ex04 the model of the rounds'
median stage times, for ex06 and ex08 that of the last run's own stage
times, which are drawn afresh every run. Nothing here is a constant of the
model: a missing row is an error naming the file.
"""
import re

from matplotlib.lines import Line2D
from matplotlib.patches import Patch

import style
from data import DataError, Trace
from gantt import BAR, draw_rows, finish, require, track_rows

TOLERANCE_US = 1.0
ENGINES = ("h2d", "kernel", "d2h")
CHAIN_EDGE = "#000000"


class Panel:
    """A level of an exercise: its span, the solution's streams, the model's row."""

    def __init__(self, level, span, mine, model, engines=()):
        self.level, self.span, self.mine = level, span, re.compile(mine)
        self.model, self.engines = model, engines  # (variant, metric) in solNN-trace.csv


# The spans, stream names and report rows are the given programs'
# (exercises/given/exNN.cu): a renamed one is an error naming the span or row.
SCHEDULES = {
    "ex01": ("11-ex01-schedule.png", "lab01", [
        Panel("level 1", "given blocking, your streams, in turns",
              r"^(your stream \d|legacy default stream)$", ("your streams", "predicted_time")),
        Panel("level 2", "level 2: per-thread default streams, your worker streams, in turns",
              r"^(worker \d's stream|legacy default stream)$",
              ("your worker streams", "predicted_time"))]),
    "ex04": ("12-ex04-schedule.png", "lab04", [
        Panel("level 1", "your pipeline", r"^unnamed id \d+$", ("your pipeline", "predicted_time"),
              ENGINES),
        Panel("level 2", "your level-2 pipeline", r"^level-2 stream \d$",
              ("your level-2 pipeline", "predicted_time"), ENGINES)]),
    "ex06": ("13-ex06-schedule.png", "lab06", [
        Panel("level 1", "your pipeline", r"^(produce|consume)$",
              ("pipeline", "last_run_predicted_time")),
        Panel("level 2", "your ring", r"^(produce|consume)$", ("ring", "last_run_predicted_time"))]),
    "ex08": ("14-ex08-schedule.png", "lab08", [
        Panel("level 1", "rounds: host-chained and yours", r"^stage \d$",
              ("your pipeline", "last_run_predicted_time")),
        Panel("level 2", "level 2: host-chained and yours", r"^level-2 stage \d$",
              ("your level-2 pipeline", "last_run_predicted_time"))]),
}


def critical_chain(ops, flows=(), engines=(), tolerance=TOLERANCE_US):
    """The critical chain of a run's ops (dicts with track, cat, start, end),
    by the rule in this file's docstring, in time order. flows: (from track,
    ts, to track, ts), each tying the op it lies in on the first track to the
    one it lies in on the second; engines: the categories whose ops wait for
    each other whatever their stream."""
    def inside(track, ts):
        return next((i for i, o in enumerate(ops) if o["track"] == track
                     and o["start"] <= ts <= o["end"]), None)
    waits = {(inside(ft, fts), inside(tt, tts)) for ft, fts, tt, tts in flows}

    def may_wait(before, after):
        a, b = ops[before], ops[after]
        return (a["track"] == b["track"] or (before, after) in waits
                or (a["cat"] == b["cat"] and a["cat"] in engines))

    if not ops:
        return []
    at = max(range(len(ops)), key=lambda i: (ops[i]["end"], ops[i]["start"]))
    chain = [at]
    while True:
        ended = [i for i in range(len(ops)) if i not in chain and may_wait(i, at)
                 and ops[i]["end"] <= ops[at]["start"] + tolerance
                 and ops[i]["start"] < ops[at]["start"]]
        if not ended:
            return [ops[i] for i in reversed(chain)]
        at = max(ended, key=lambda i: ops[i]["end"])
        chain.append(at)


def solution_run(trace, panel):
    """The last run of the panel's span on the solution's streams alone."""
    mine = [ops for ops in trace.runs(panel.span)
            if len({o["track"] for o in ops}) >= 2
            and all(panel.mine.match(trace.track_names.get(o["track"], "")) for o in ops)]
    if not mine:
        raise DataError(f"{trace.path}: no run of '{panel.span}' on the solution's streams "
                        f"alone ({panel.mine.pattern}) with two streams or more")
    return mine[-1]


def label(op):
    """An activity as the chain's summary names it: a copy by its direction,
    a kernel by its name."""
    return {"h2d": "H2D", "d2h": "D2H"}.get(op["cat"], op["name"])


def summary(chain):
    """'H2D, affine_work x8, D2H': the chain's activities in order, repeats
    counted; past four kinds in turn, each kind's count ('... in turns')."""
    parts = []
    for op in chain:
        if parts and parts[-1][0] == label(op):
            parts[-1][1] += 1
        else:
            parts.append([label(op), 1])
    if len(parts) > 4:
        counts = {}
        for op in chain:
            counts[label(op)] = counts.get(label(op), 0) + 1
        parts, turns = [[k, n] for k, n in counts.items()], ", in turns"
    else:
        turns = ""
    return ", ".join(name + (f" x{n}" if n > 1 else "") for name, n in parts) + turns


def switches(chain):
    return sum(a["track"] != b["track"] for a, b in zip(chain, chain[1:]))


def draw_panel(ax, trace, report, panel):
    ops = solution_run(trace, panel)
    chain = critical_chain(ops, trace.flows, panel.engines)
    start = draw_rows(ax, trace, ops, lambda o: style.STAGE.get(o["cat"], style.OTHER_OP))
    row = {t: i for i, t in enumerate(track_rows(trace, ops))}
    for o in chain:
        ax.add_patch(style.plt.Rectangle(((o["start"] - start) / 1e3, row[o["track"]] - BAR / 2),
                                         (o["end"] - o["start"]) / 1e3, BAR, fill=False,
                                         edgecolor=CHAIN_EDGE, linewidth=2.2, zorder=3))
    for a, b in zip(chain, chain[1:]):  # a hand-off to another stream: an arrow
        if a["track"] != b["track"]:
            ax.annotate("", xy=((b["start"] - start) / 1e3, row[b["track"]]),
                        xytext=((a["end"] - start) / 1e3, row[a["track"]]),
                        arrowprops={"arrowstyle": "->", "color": CHAIN_EDGE, "lw": 1.4},
                        zorder=4)
    bound = report.value(*panel.model)
    ms = (max(o["end"] for o in ops) - start) / 1e3
    ax.axvline(bound, color="black", linewidth=1.2, linestyle="--", zorder=2)
    busy = sum(o["end"] - o["start"] for o in chain) / 1e3
    ax.set_title(f"{panel.level}: {ms:.2f} ms, the model's bound {bound:.2f} ms (x{ms / bound:.2f});"
                 f" the chain: {summary(chain)}", loc="left", fontsize=11)
    return (f"{panel.level}: {len(chain)} on the chain, {switches(chain)} stream switches, "
            f"{busy / ms:.0%} of the run; {ms:.2f} ms, bound {bound:.2f} ms")


def draw(results, out, exercise):
    name, _lab, panels = SCHEDULES[exercise]
    number = "sol" + exercise[2:]
    stem = f"{number}-trace"
    require(results, f"{stem}.json", stem, f"{number} --quick --csv --trace")
    trace, report = Trace(results.path(f"{stem}.json")), results.report(stem)
    rows = [len({o["track"] for o in solution_run(trace, p)}) for p in panels]
    fig, axes = style.figure(12, 2.4 + 0.55 * sum(rows) + 0.5 * len(panels), nrows=len(panels),
                             gridspec_kw={"height_ratios": rows})
    notes = [draw_panel(ax, trace, report, p) for ax, p in zip(axes, panels)]
    axes[-1].set_xlabel("time since the run's first operation (ms)")
    handles = [Patch(color=style.STAGE[k], label=v) for k, v in
               (("h2d", "H2D copy"), ("kernel", "kernel"), ("d2h", "D2H copy"))]
    handles += [Patch(facecolor="none", edgecolor=CHAIN_EDGE, linewidth=2.2,
                      label="the critical chain"),
                Line2D([], [], color="black", linestyle="--", label="the model's bound")]
    axes[0].legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=9)
    stand_in = f"STAND-IN ({trace.stand_in}), not a GPU run: " if trace.stand_in else ""
    path = finish(fig, trace, results, out, name, "the solution's last run of each level",
                  f"{stand_in}{exercise} solved: its schedule, the critical chain outlined")
    return path, "; ".join(notes)
