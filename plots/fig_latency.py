"""Figure 5: lab05's latency distributions, a short kernel launched behind a
busy GPU at the same priority as the background and at the greatest one.

From the samples (rows `latency_sample`) when the report has them: a
histogram on log-spaced bins. Reports written before lab05 gave its samples
have only p5, median, p95 and p99; the figure then draws those and says so.
"""
import math

from matplotlib.ticker import FuncFormatter

import style
from data import DataError

NAME = "5-lab05-latency.png"
VARIANTS = (("same priority", style.TRAP), ("high priority", style.FIX))
BINS_PER_DECADE = 12


def draw(results, out):
    report = results.report("lab05")
    samples = {v: report.samples(v, "latency") for v, _ in VARIANTS}
    fig, ax = style.figure(10.5, 5.8)
    if all(samples.values()):
        histograms(ax, report, samples)
        what = "lab05: latency from launch to completion behind a busy GPU"
        note = " + ".join(f"{len(s)}" for s in samples.values()) + " samples"
    elif any(samples.values()):
        raise DataError(f"{report.path}: latency samples for one priority but not the other")
    else:
        summaries(ax, report)
        what = "lab05: latency behind a busy GPU (summary: this report has no samples)"
        note = "no samples in lab05.csv: percentiles instead"
    alone = report.value("alone", "latency")
    ax.axvline(alone, color="black", linewidth=1, linestyle=":",
               label=f"alone, idle GPU: {alone:.1f} µs (median)")
    ax.set_xscale("log")
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.set_xlabel("latency from launch to completion (µs, log scale)")
    ax.legend(loc="upper center", fontsize=9.5)
    style.title(fig, what, results)
    style.footer(fig, "spread: " + "; ".join(
        f"{v} p5-p95 {report.value(v, 'latency_p5'):.0f}-{report.value(v, 'latency_p95'):.0f} µs"
        for v, _ in VARIANTS) + style.runs_note(results, "lab05"))
    style.layout(fig)
    return style.save(fig, out, NAME), note


def histograms(ax, report, samples):
    every = [s for v in samples.values() for s in v]
    if not all(0 < s < math.inf for s in every):
        raise DataError(f"{report.path}: a latency sample is not a positive number")
    low, high = math.floor(math.log10(min(every))), math.ceil(math.log10(max(every)))
    edges = [10 ** (low + i / BINS_PER_DECADE) for i in range((high - low) * BINS_PER_DECADE + 1)]
    for variant, colour in VARIANTS:
        values = samples[variant]
        median = report.value(variant, "latency")
        ax.hist(values, bins=edges, color=colour, alpha=0.35)
        ax.hist(values, bins=edges, color=colour, histtype="step", linewidth=1.5,
                label=f"{variant}: {len(values)} samples, median {median:.0f} µs")
        predicted = report.value(variant, "predicted_latency")
        ax.axvline(predicted, color=colour, linestyle="--", linewidth=1.3,
                   label=f"{variant}: predicted {predicted:.0f} µs")
    ax.set_ylabel("samples per bin (count)")
    ax.set_ylim(top=ax.get_ylim()[1] * 1.45)  # room for the legend above the bars


def summaries(ax, report):
    """Without samples: p5 to p95 as a band, the median and p99 as marks."""
    for row, (variant, colour) in enumerate(VARIANTS):
        median, p5, p95 = report.stats(variant, "latency")
        p99 = report.value(variant, "latency_p99")
        predicted = report.value(variant, "predicted_latency")
        ax.plot([p5, p95], [row, row], color=colour, linewidth=14, alpha=0.35,
                solid_capstyle="butt")
        ax.plot(median, row, "o", color=colour, markersize=10)
        ax.plot(p99, row, "|", color=colour, markersize=26, markeredgewidth=2.5)
        ax.plot(predicted, row, "D", color="white", markeredgecolor=colour, markersize=9,
                markeredgewidth=1.8)
        ax.annotate(f"median {median:.0f} µs, predicted {predicted:.0f} µs\n"
                    f"p5-p95 {p5:.0f}-{p95:.0f} µs, p99 {p99:.0f} µs", (median, row),
                    xytext=(0, 16), textcoords="offset points", ha="center", fontsize=9.5,
                    color=colour)
    legend = [("s", 0.35, 14, "p5 to p95"), ("o", 1, 10, "median"), ("|", 1, 16, "p99"),
              ("D", 1, 8, "predicted by the model")]
    for marker, alpha, size, label in legend:
        ax.plot([], [], marker, color="#555555", alpha=alpha, markersize=size,
                markerfacecolor="white" if marker == "D" else None, label=label)
    ax.set_yticks([0, 1])
    ax.set_yticklabels([v for v, _ in VARIANTS])
    ax.set_ylim(-0.6, 2.2)  # room for the legend above the rows
    ax.grid(axis="y", visible=False)
    ax.text(0.99, 0.02, "no latency samples in this lab05.csv (written before lab05 gave them):\n"
            "percentiles from the report instead of a histogram", transform=ax.transAxes,
            ha="right", va="bottom", fontsize=9, color="#555555")
