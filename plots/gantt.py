"""What the trace figures (4, 6, 7) share: a traced run drawn as a Gantt
chart, one row per stream, and the error for a trace make results did not
write. Times in a Trace are microseconds; the charts are in ms."""
import style
from data import DataError

BAR = 0.76  # a bar's height, of its row's


def require(results, name, stem, command):
    """DataError unless the results folder has the trace `name`."""
    if not results.has(name):
        why = results.waived(stem)
        raise DataError(f"{results.path(name)}: missing" + (f": the trace was {why}" if why
                        else f" (make results traces it: {command})"))


def length(ops):
    return max(o["end"] for o in ops) - min(o["start"] for o in ops)


def track_rows(trace, ops):
    """The tracks of ops in the order draw_rows puts them, top to bottom."""
    return sorted({o["track"] for o in ops}, key=lambda t: trace.track_order.get(t, t))


def draw_rows(ax, trace, ops, colour, start=None, extra=()):
    """One row per stream of ops, first stream on top, each op a bar coloured
    colour(op); `extra` rows (label, ops, colour) go below. Times are from
    `start` (default the first op's). Returns that start."""
    start = min(o["start"] for o in ops) if start is None else start
    tracks = track_rows(trace, ops)
    rows = [(trace.track_names.get(t, f"track {t}"), [o for o in ops if o["track"] == t])
            for t in tracks]
    rows += [(label, mine) for label, mine, _ in extra]
    colours = [colour] * len(tracks) + [c for _, _, c in extra]
    for row, ((_, mine), paint) in enumerate(zip(rows, colours)):
        by_colour = {}
        for o in mine:
            by_colour.setdefault(paint(o), []).append(((o["start"] - start) / 1e3,
                                                       (o["end"] - o["start"]) / 1e3))
        for c, spans in by_colour.items():
            ax.broken_barh(spans, (row - BAR / 2, BAR), facecolor=c, edgecolor="white",
                           linewidth=0.4)
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([label for label, _ in rows])
    ax.set_ylim(len(rows) - 0.4, -0.6)  # the first stream on top
    ax.grid(axis="y", visible=False)
    return start


def finish(fig, trace, results, out, name, traced, title):
    """Under the chart a grey line says what was traced (`traced`) and any
    records CUPTI dropped; above it the title. Saves it; returns its path."""
    note = (f"{traced}, traced with CUPTI (its times include the tracing's overhead); "
            "one run, so no spread: the timed runs' p5-p95 are in the lab's report")
    if trace.dropped:
        note += f"; CUPTI dropped {trace.dropped} records"
    style.footer(fig, note)
    style.title(fig, title, results)
    style.layout(fig)
    return style.save(fig, out, name)
