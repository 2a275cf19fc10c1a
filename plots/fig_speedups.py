"""Figure 1: each lab's fix over its trap, measured beside predicted (keys.py),
and beside it lab06, whose two fixes differ in how long the host waits, not
in speed: drawn as host time, each beside its model."""
from matplotlib.ticker import FuncFormatter

import style
from data import DataError
from keys import evaluate, host_time

NAME = "1-speedups.png"
EXIT_NOTE = {1: "results WRONG (exit 1)", 4: "effect not observed (exit 4)"}
WIDTH = 0.38


def draw(results, out):
    bars, notes = evaluate(results)
    hand_offs = host_time(results)
    if not bars and not hand_offs:
        raise DataError(f"{results.folder}: no report of any lab figure 1 compares ("
                        + "; ".join(notes) + ")")
    panels = [p for p in (bars, hand_offs) if p]
    fig, axes = style.figure(13.5 if len(panels) == 2 else 11.5, 6.8, ncols=len(panels),
                             squeeze=False, gridspec_kw={"width_ratios": [len(p) for p in panels]})
    axes = list(axes[0])
    runs = max(len(b["runs"]) for p in panels for b in p)
    if bars:
        speedups(axes[0], bars, runs)
    if hand_offs:
        lab06(axes[-1], hand_offs, runs)
    style.title(fig, "What each lab's fix buys: measured beside predicted", results)
    spread = (f"bars: min to max over {runs} runs (make results RUNS={runs}, spread.csv)"
              if runs > 1 else "bars: one run; each measured ratio's range when both its "
              "sides lie anywhere in their p5-p95 (lab06: the p5-p95 of the host time)")
    left_out = ("; left out: " + "; ".join(notes)) if notes else ""
    style.footer(fig, spread + left_out)
    style.layout(fig)
    return style.save(fig, out, NAME), ("left out: " + "; ".join(notes)) if notes else None


def measured_bars(ax, xs, items, runs, colour, labels):
    """Measured medians with their spread: min-max over runs, else p5-p95."""
    ax.bar([x - WIDTH / 2 for x in xs], [b["measured"] for b in items], WIDTH, color=colour,
           label="measured (median)", zorder=3)
    for x, b in zip(xs, items):
        low, high = (min(b["runs"]), max(b["runs"])) if runs > 1 else b["p5_p95"] or (None, None)
        if low is not None:
            ax.errorbar(x - WIDTH / 2, b["measured"], fmt="none", ecolor="black", capsize=4,
                        yerr=[[b["measured"] - low], [high - b["measured"]]], zorder=4)
        # the number above its bar and its error bar, which it would hide
        ax.annotate(labels(b["measured"]), (x - WIDTH / 2, max(b["measured"], high or 0)),
                    xytext=(0, 3), textcoords="offset points", ha="center", va="bottom",
                    fontsize=10)


def predicted_bars(ax, xs, items, labels, legend):
    with_model = [(x, b["predicted"]) for x, b in zip(xs, items) if b["predicted"] is not None]
    if with_model:
        drawn = ax.bar([x + WIDTH / 2 for x, _ in with_model], [p for _, p in with_model], WIDTH,
                       color="white", edgecolor=style.PREDICTED, hatch="///", linewidth=1.2,
                       label=legend, zorder=3)
        ax.bar_label(drawn, labels=[labels(p) for _, p in with_model], padding=2,
                     fontsize=10, color="#555555")
    return [p for _, p in with_model]


def speedups(ax, bars, runs):
    xs = range(len(bars))
    measured_bars(ax, xs, bars, runs, style.MEASURED, times)
    predicted = predicted_bars(ax, xs, bars, times, "predicted by the lab's model")
    for x, b in zip(xs, bars):
        if b["predicted"] is None:
            ax.text(x + WIDTH / 2, 1.05, "no model", ha="center", va="bottom",
                    fontsize=9, color="#555555")
    ax.set_xticks(list(xs))
    ax.set_xticklabels([tick_label(b) for b in bars], fontsize=9.5)
    ax.set_yscale("log")
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}x"))
    ax.grid(axis="x", visible=False)
    measured = [b["measured"] for b in bars]
    highs = [max(b["runs"]) for b in bars] + [b["p5_p95"][1] for b in bars if b["p5_p95"]]
    ax.set_ylim(min(0.8, min(measured) * 0.8), max(measured + predicted + highs) * 2.2)
    ax.axhline(1, color="black", linewidth=0.8)
    ax.set_ylabel("speedup of the fix over the trap (x, log scale)")
    ax.set_title("the fix over the trap", loc="left", fontsize=11.5)
    ax.legend(loc="upper left")


def lab06(ax, hand_offs, runs):
    """Host time of each hand-off: stream sync waits out the producer
    (--spin-ms, its model), event wait only issues the calls."""
    xs = range(len(hand_offs))
    measured_bars(ax, xs, hand_offs, runs, style.MEASURED, milliseconds)
    predicted_bars(ax, xs, hand_offs, milliseconds, "_")
    for x, b in zip(xs, hand_offs):
        if b["predicted"] is None:
            ax.text(x + WIDTH / 2, b["measured"] / 2, "model:\nthe host\nis not\nblocked",
                    ha="center", va="bottom", fontsize=9, color="#555555")
    ax.set_xticks(list(xs))
    ax.set_xticklabels([b["label"] for b in hand_offs], fontsize=9.5)
    ax.set_yscale("log")
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.grid(axis="x", visible=False)
    values = [b["measured"] for b in hand_offs] + [b["predicted"] or 0 for b in hand_offs]
    ax.set_ylim(min(b["measured"] for b in hand_offs) / 3, max(values) * 6)
    ax.set_ylabel("host time per hand-off (ms, log scale)")
    ax.set_title("lab06: how long the host is held, by\nthe two correct fixes of its race",
                 loc="left", fontsize=11.5)


def tick_label(bar):
    lines = [bar["lab"], bar["label"]]
    if bar.get("choice"):
        lines.append(f"({bar['choice']})")
    if bar["exit_code"] in EXIT_NOTE:
        lines.append(EXIT_NOTE[bar["exit_code"]])
    return "\n".join(lines)


def times(v):
    """2.00x, 29.5x, 236x: three figures at most, enough to compare."""
    return f"{v:.0f}x" if v >= 100 else f"{v:.1f}x" if v >= 10 else f"{v:.2f}x"


def milliseconds(v):
    return f"{v:.3g} ms"
