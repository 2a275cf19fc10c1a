"""Figure 6: lab07's part 2 as a Gantt chart, one row per stream: pairs
A_i -> B_i issued depth-first (A0 B0 A1 B1 ...) above the same pairs issued
breadth-first (every A, then every B), on the same time axis. With 8
hardware queues and 16 streams, depth-first A8..A15 begin one T late: each
waits in its queue behind a B that waits for its own A (a false
dependency); breadth-first every A begins at once."""
import statistics

from matplotlib.patches import Patch

import style
from data import Trace
from gantt import draw_rows, finish, length, require

NAME = "6-lab07-queues.png"
TRACE = "lab07-trace.json"
WAYS = ("depth-first", "breadth-first")  # lab07's span names, as its ways
ORDER = {"depth-first": "A0 B0 A1 B1 ...", "breadth-first": "A0 A1 ... B0 B1 ..."}


def pairs(ops):
    """Each stream's first kernel of the run is its A, the second its B."""
    role, seen = {}, {}
    for o in sorted(ops, key=lambda o: o["start"]):
        role[id(o)] = "A" if seen.get(o["track"], 0) == 0 else "B"
        seen[o["track"]] = seen.get(o["track"], 0) + 1
    return role


def late_as(ops, role, t_us):
    """The A kernels that began over T/2 after the first A: they waited."""
    starts = [o["start"] for o in ops if role[id(o)] == "A"]
    return sum(s - min(starts) > t_us / 2 for s in starts)


def draw(results, out):
    require(results, TRACE, "lab07-trace", "lab07 --quick --trace")
    trace = Trace(results.path(TRACE))
    runs = [(w, [o for o in trace.last_run(w) if o["cat"] == "kernel"]) for w in WAYS]
    t_us = statistics.median(o["end"] - o["start"] for _, ops in runs for o in ops)
    rows = [len({o["track"] for o in ops}) for _, ops in runs]
    fig, axes = style.figure(12, 2.4 + 0.28 * sum(rows), nrows=2, sharex=True,
                             gridspec_kw={"height_ratios": rows})
    late = []
    for ax, (way, ops) in zip(axes, runs):
        role = pairs(ops)
        draw_rows(ax, trace, ops, lambda o: style.PAIR[role[id(o)]])
        late.append(late_as(ops, role, t_us))
        ax.set_title(f"{way} ({ORDER[way]}): {length(ops) / 1e3:.2f} ms; {late[-1]} of "
                     f"{len(ops) // 2} A kernels began over T/2 late", loc="left", fontsize=11.5)
        ax.axvline(length(ops) / 1e3, color="black", linewidth=1, linestyle="--")
        ax.tick_params(axis="y", labelsize=8)
    axes[-1].set_xlabel(f"time since the run's first kernel (ms); T = {t_us / 1e3:.2f} ms")
    handles = [Patch(color=style.PAIR[k], label=f"{k}_i ({'first' if k == 'A' else 'then'})")
               for k in style.PAIR]
    axes[-1].legend(handles=handles, loc="center right", fontsize=10, title="kernel")
    path = finish(fig, trace, results, out, NAME, "one run of each order, after the timed rounds",
                  "lab07: kernel pairs A_i -> B_i on their own streams, by issue order")
    return path, (f"{rows[0]} and {rows[1]} streams; {late[0]} A kernels late depth-first, "
                  f"{late[1]} breadth-first")
