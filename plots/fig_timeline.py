"""Figure 4: lab04's traced run as a Gantt chart, one row per stream: the
serial run above the best pipelined one, on the same time axis, each from
its own first operation. The trace is the Chrome JSON that --trace writes."""
from matplotlib.patches import Patch

import style
from data import DataError, Trace

NAME = "4-lab04-timeline.png"
TRACE = "lab04-trace.json"
SERIAL = "serial"            # lab04's span names
NOT_PIPELINED = ("serial", "pageable")
STAGE_LABEL = {"h2d": "H2D copy", "kernel": "kernel", "d2h": "D2H copy"}


def best_pipelined(trace):
    """The pipelined variant whose last (timed) run took the least time."""
    candidates = [n for n in trace.span_names() if n not in NOT_PIPELINED]
    if not candidates:
        raise DataError(f"{trace.path}: no pipelined variant besides {', '.join(NOT_PIPELINED)}")
    return min(candidates, key=lambda n: length(trace.last_run(n)))


def length(ops):
    return max(o["end"] for o in ops) - min(o["start"] for o in ops)


def draw(results, out, variant=None):
    if not results.has(TRACE):
        why = results.waived("lab04-trace")
        raise DataError(f"{results.path(TRACE)}: missing" + (f": the trace was {why}" if why
                        else " (make results traces lab04 with --trace)"))
    trace = Trace(results.path(TRACE))
    variant = variant or best_pipelined(trace)
    runs = [(SERIAL, trace.last_run(SERIAL)), (variant, trace.last_run(variant))]
    rows = [len({o["track"] for o in ops}) for _, ops in runs]
    fig, axes = style.figure(12, 2.2 + 0.55 * sum(rows), nrows=2, sharex=True,
                             gridspec_kw={"height_ratios": rows})
    serial_ms = length(runs[0][1]) / 1e3
    for ax, (name, ops) in zip(axes, runs):
        draw_run(ax, trace, ops)
        ms = length(ops) / 1e3
        gain = "" if name == SERIAL else f", {serial_ms / ms:.2f}x faster than serial"
        ax.set_title(f"{name}: {ms:.2f} ms{gain}", loc="left", fontsize=11.5)
        ax.axvline(ms, color="black", linewidth=1, linestyle="--")
    axes[-1].set_xlabel("time since the run's first operation (ms)")
    handles = [Patch(color=style.STAGE[k], label=v) for k, v in STAGE_LABEL.items()]
    axes[-1].legend(handles=handles, loc="center right", fontsize=10, title="on the GPU")
    note = ("the last timed run of each variant, traced with CUPTI "
            "(its times include the tracing's overhead)")
    if trace.dropped:
        note += f"; CUPTI dropped {trace.dropped} records"
    fig.text(0.01, 0.005, note, fontsize=9, color="#555555", va="bottom")
    style.title(fig, "lab04: the copies and kernels of one run, per stream", results.gpu)
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    return style.save(fig, out, NAME), f"{SERIAL} above {variant}"


def draw_run(ax, trace, ops):
    start = min(o["start"] for o in ops)
    tracks = sorted({o["track"] for o in ops}, key=lambda t: trace.track_order.get(t, t))
    for row, track in enumerate(tracks):
        mine = [o for o in ops if o["track"] == track]
        for cat in {o["cat"] for o in mine}:
            spans = [((o["start"] - start) / 1e3, (o["end"] - o["start"]) / 1e3)
                     for o in mine if o["cat"] == cat]
            colour = style.STAGE.get(cat, style.OTHER_OP)
            ax.broken_barh(spans, (row - 0.38, 0.76), facecolor=colour, edgecolor="white",
                           linewidth=0.4)
    ax.set_yticks(range(len(tracks)))
    ax.set_yticklabels([trace.track_names.get(t, f"track {t}") for t in tracks])
    ax.set_ylim(len(tracks) - 0.4, -0.6)  # the first stream on top
    ax.grid(axis="y", visible=False)
