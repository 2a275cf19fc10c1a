"""Figure 4: lab04's traced run as a Gantt chart, one row per stream: the
serial run above the best pipelined one, on the same time axis, each from
its own first operation. The trace is the Chrome JSON that --trace writes."""
from matplotlib.patches import Patch

import style
from data import DataError, Trace
from gantt import draw_rows, finish, length, require

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


def draw(results, out, variant=None):
    require(results, TRACE, "lab04-trace", "lab04 --quick --trace")
    trace = Trace(results.path(TRACE))
    variant = variant or best_pipelined(trace)
    runs = [(SERIAL, trace.last_run(SERIAL)), (variant, trace.last_run(variant))]
    rows = [len({o["track"] for o in ops}) for _, ops in runs]
    fig, axes = style.figure(12, 2.2 + 0.55 * sum(rows), nrows=2, sharex=True,
                             gridspec_kw={"height_ratios": rows})
    serial_ms = length(runs[0][1]) / 1e3
    for ax, (name, ops) in zip(axes, runs):
        draw_rows(ax, trace, ops, lambda o: style.STAGE.get(o["cat"], style.OTHER_OP))
        ms = length(ops) / 1e3
        gain = "" if name == SERIAL else f", {serial_ms / ms:.2f}x faster than serial"
        ax.set_title(f"{name}: {ms:.2f} ms{gain}", loc="left", fontsize=11.5)
        ax.axvline(ms, color="black", linewidth=1, linestyle="--")
    axes[-1].set_xlabel("time since the run's first operation (ms)")
    handles = [Patch(color=style.STAGE[k], label=v) for k, v in STAGE_LABEL.items()]
    axes[-1].legend(handles=handles, loc="center right", fontsize=10, title="on the GPU")
    path = finish(fig, trace, results, out, NAME, "the last timed run of each variant",
                  "lab04: the copies and kernels of one run, per stream")
    return path, f"{SERIAL} above {variant}"

