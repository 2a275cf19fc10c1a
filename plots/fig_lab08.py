"""Figure 7: lab08's balanced pipeline as a Gantt chart, one row per stage's
stream and one for the host: chained by the host (it waits for each stage
before it launches the next: the streams take turns, with gaps) above
chained by events (the GPU waits, the host does not: a batch's first stage
runs beside the one before's second), on the same time axis."""
from matplotlib.patches import Patch

import style
from data import Trace
from gantt import draw_rows, finish, length, require

NAME = "7-lab08-pipeline.png"
TRACE = "lab08-trace.json"
WAYS = ("host-chained", "event-chained")  # lab08's span names
HOST_ROW = "host (blocked)"


def draw(results, out):
    require(results, TRACE, "lab08-trace", "lab08 --quick --trace")
    trace = Trace(results.path(TRACE))
    runs = []
    for way in WAYS:
        ops = [o for o in trace.last_run(way) if o["cat"] == "kernel"]
        first = min(o["start"] for o in ops)
        waits = [w for w in trace.host_waits(way) if w["end"] > first]
        runs.append((way, ops, first, waits))
    rows = [len({o["track"] for o in ops}) + 1 for _, ops, _, _ in runs]
    fig, axes = style.figure(12, 2.6 + 0.5 * sum(rows), nrows=2, sharex=True,
                             gridspec_kw={"height_ratios": rows})
    host_ms = length(runs[0][1]) / 1e3
    for ax, (way, ops, first, waits) in zip(axes, runs):
        draw_rows(ax, trace, ops, lambda o: style.STAGE["kernel"], first,
                  extra=[(HOST_ROW, waits, lambda o: style.HOST_WAIT)])
        ms = length(ops) / 1e3
        ax.set_title(f"{way}: {ms:.2f} ms, " + host_said(way, waits, first, host_ms / ms),
                     loc="left", fontsize=11.5)
        ax.axvline(ms, color="black", linewidth=1, linestyle="--")
    axes[-1].set_xlabel("time since the run's first stage began (ms)")
    handles = [Patch(color=style.STAGE["kernel"], label="a stage's kernel"),
               Patch(color=style.HOST_WAIT, label="the host in cuda*Synchronize")]
    axes[-1].legend(handles=handles, loc="center right", fontsize=10)
    path = finish(fig, trace, results, out, NAME, "one balanced run of each, after the timed "
                  "rounds", "lab08: three stages over B batches, a stream per stage, chained "
                  "two ways")
    return path, f"{WAYS[0]} above {WAYS[1]}, {rows[0] - 1} and {rows[1] - 1} stage streams"


def host_said(way, waits, first, gain):
    """What the host row shows, in words: how often it blocked, or when it
    was done issuing (the run's own wait for the end is its only wait)."""
    if way == WAYS[0]:
        blocked = sum(w["end"] - max(w["start"], first) for w in waits) / 1e3
        return f"the host blocked {len(waits)} times, {blocked:.2f} ms in all"
    done = (min(w["start"] for w in waits) - first) / 1e3 if waits else 0
    return (f"{gain:.2f}x faster; the host issued every launch by {done:.2f} ms, "
            "then only waited for the end")
