"""Figure 1: each lab's fix over its trap, measured beside predicted (keys.py)."""
from matplotlib.ticker import FuncFormatter

import style
from data import DataError
from keys import evaluate

NAME = "1-speedups.png"
EXIT_NOTE = {1: "results WRONG (exit 1)", 4: "effect not observed (exit 4)"}


def draw(results, out):
    bars, notes = evaluate(results)
    if not bars:
        raise DataError(f"{results.folder}: no report of any lab figure 1 compares ("
                        + "; ".join(notes) + ")")
    fig, ax = style.figure(11.5, 6.4)
    width = 0.38
    xs = range(len(bars))
    measured = [b["measured"] for b in bars]
    drawn = ax.bar([x - width / 2 for x in xs], measured, width, color=style.MEASURED,
                   label="measured (median)", zorder=3)
    ax.bar_label(drawn, labels=[times(v) for v in measured], padding=2, fontsize=10)
    with_model = [(x, b["predicted"]) for x, b in zip(xs, bars) if b["predicted"] is not None]
    if with_model:
        drawn = ax.bar([x + width / 2 for x, _ in with_model], [p for _, p in with_model], width,
                       color="white", edgecolor=style.PREDICTED, hatch="///", linewidth=1.2,
                       label="predicted by the lab's model", zorder=3)
        ax.bar_label(drawn, labels=[times(p) for _, p in with_model], padding=2,
                     fontsize=10, color="#555555")
    for x, b in zip(xs, bars):
        if b["predicted"] is None:
            ax.text(x + width / 2, 1.05, "no model", ha="center", va="bottom",
                    fontsize=9, color="#555555")
        if len(b["runs"]) > 1:
            ax.errorbar(x - width / 2, b["measured"], fmt="none", ecolor="black", capsize=4,
                        yerr=[[b["measured"] - min(b["runs"])], [max(b["runs"]) - b["measured"]]],
                        zorder=4, label="_")
    if any(len(b["runs"]) > 1 for b in bars):
        ax.plot([], [], "k|", markersize=10,
                label=f"min to max over {max(len(b['runs']) for b in bars)} runs")
    ax.set_xticks(list(xs))
    ax.set_xticklabels([tick_label(b) for b in bars], fontsize=9.5)
    ax.set_yscale("log")
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}x"))
    ax.grid(axis="x", visible=False)
    top = max(measured + [p for _, p in with_model])
    ax.set_ylim(min(0.8, min(measured) * 0.8), top * 2.2)
    ax.axhline(1, color="black", linewidth=0.8)
    ax.set_ylabel("speedup of the fix over the trap (x, log scale)")
    ax.legend(loc="upper left")
    style.title(fig, "What each lab's fix buys: measured beside predicted", results.gpu)
    if notes:
        fig.text(0.01, 0.01, "left out: " + "; ".join(notes), fontsize=9, color="#555555",
                 ha="left", va="bottom", wrap=True)
    fig.tight_layout(rect=(0, 0.04 if notes else 0, 1, 1))
    return style.save(fig, out, NAME), ("left out: " + "; ".join(notes)) if notes else None


def tick_label(bar):
    lines = [bar["lab"], bar["label"]]
    if bar["choice"]:
        lines.append(f"({bar['choice']})")
    if bar["exit_code"] in EXIT_NOTE:
        lines.append(EXIT_NOTE[bar["exit_code"]])
    return "\n".join(lines)


def times(v):
    """2.00x, 29.5x, 236x: three figures at most, enough to compare."""
    return f"{v:.0f}x" if v >= 100 else f"{v:.1f}x" if v >= 10 else f"{v:.2f}x"
