"""Figure 10: lab14's urgent kernel behind a background that fills the GPU,
three ways: at the background's priority it waits for the rest of the
background, at the greatest priority for the background block it landed
in, in a partition of k SMs of its own (a green context) for about nothing.
Beside it the sweep's trade: the urgent kernel's latency and what the
background pays (its time on SMs - k over the whole GPU's) against k."""
import re
import textwrap

import style
from data import DataError

NAME = "10-lab14-partitions.png"
WAYS = (("same priority", style.TRAP), ("greatest priority", style.REGISTERED),
        ("own partition", style.FIX))
K = re.compile(r"k=([0-9]+)")
WIDTH = 0.38
ON_WHITE = {"boxstyle": "square,pad=0.1", "fc": "white", "ec": "none"}


def ways(report):
    """[(way, colour, (median, p5, p95), predicted, model text)] in WAYS' order."""
    return [(way, colour, report.stats(way, "latency"), report.value(way, "predicted_latency"),
             report.text(way, "model_latency") or "") for way, colour in WAYS]


def sweep(report):
    """[(k, (median, p5, p95) latency, measured cost, predicted cost)], smallest k first."""
    found = []
    for variant in report.variants("urgent_latency"):
        m = K.fullmatch(variant)
        if m:
            found.append((int(m.group(1)), report.stats(variant, "urgent_latency"),
                          report.value(variant, "background_cost"),
                          report.value(variant, "predicted_background_cost")))
    if len(found) < 2:
        raise DataError(f"{report.path}: fewer than two 'k=N' urgent_latency rows: lab14 ran "
                        f"with --no-sweep, or this is not lab14's report")
    return sorted(found)


def draw_ways(ax, report, bars):
    for x, (way, colour, (m, lo, hi), p, _) in enumerate(bars):
        ax.bar(x - WIDTH / 2, m, WIDTH, color=colour, zorder=3)
        ax.errorbar(x - WIDTH / 2, m, yerr=[[m - lo], [hi - m]], fmt="none", ecolor="black",
                    capsize=3, zorder=4)
        ax.bar(x + WIDTH / 2, p, WIDTH, color="white", edgecolor=style.PREDICTED, hatch="///",
               linewidth=1.2, zorder=3, label="model" if x == 0 else "_")
        ax.annotate(f"{m:.0f} µs" if m >= 100 else f"{m:.1f} µs", (x - WIDTH / 2, hi),
                    xytext=(0, 4), textcoords="offset points", ha="center", fontsize=9.5,
                    bbox=ON_WHITE, zorder=5)
        ax.annotate(f"{p:.0f}" if p >= 100 else f"{p:.1f}", (x + WIDTH / 2, p), xytext=(0, 2),
                    textcoords="offset points", ha="center", fontsize=9, color="#555555")
    alone = report.value("alone, own partition", "latency")
    ax.axhline(alone, color="black", linestyle=":", linewidth=1, zorder=2,
               label=f"alone in the partition: {alone:.1f} µs (median)")
    ax.bar(0, 0, color="#777777", label="measured (median, p5-p95)")  # the legend's key only
    ax.set_yscale("log")
    ax.set_xticks(range(len(bars)))
    ax.set_xticklabels([f"{way}\n" + textwrap.fill(f"({model})", 24) for way, _, _, _, model in bars],
                       fontsize=9)
    ax.set_ylim(min(lo for _, _, (_, lo, _), _, _ in bars) / 2,
                max(max(hi, p) for _, _, (_, _, hi), p, _ in bars) * 4)
    ax.grid(axis="x", visible=False)
    ax.set_ylabel("urgent kernel's latency, launch to completion (µs, log scale)")
    blocks = report.value("parameter", "urgent_blocks")
    ax.set_title(f"the urgent kernel ({blocks:g} blocks of {report.value('parameter', 'urgent_us'):g} "
                 f"µs) behind the background", loc="left", fontsize=11.5)
    ax.legend(loc="upper right", fontsize=9)


def draw_sweep(ax, points, sms):
    ks = [k for k, _, _, _ in points]
    median, low, high = zip(*(s for _, s, _, _ in points))
    ax.fill_between(ks, low, high, color=style.FIX, alpha=0.2, linewidth=0)
    ax.plot(ks, median, "-o", color=style.FIX, linewidth=1.8, markersize=6,
            label="urgent latency (median, p5-p95)")
    ax.set_xlabel(f"k: the partition's SMs (of {sms:g}; the device's sizes)")
    ax.set_ylabel("urgent kernel's latency (µs)", color=style.FIX)
    ax.set_ylim(0, max(high) * 1.3)
    ax.set_xticks(ks)
    cost = ax.twinx()
    cost.spines["right"].set_visible(True)
    cost.plot(ks, [p for _, _, _, p in points], "--", marker="o", markerfacecolor="white",
              color=style.PREDICTED, linewidth=1.6, label="background's cost: model")
    cost.plot(ks, [c for _, _, c, _ in points], "s", color=style.TRAP, markersize=6,
              label="background's cost: measured")
    for k, _, c, _ in points:
        cost.annotate(f"{c:.2f}x", (k, c), xytext=(6, -4), textcoords="offset points",
                      fontsize=9, color=style.TRAP, bbox=ON_WHITE)
    cost.set_ylabel("background's time over the whole GPU's (x)", color=style.TRAP)
    cost.set_ylim(1, max(max(c, p) for _, _, c, p in points) * 1.15)
    cost.grid(False)
    lines = ax.get_legend_handles_labels()
    more = cost.get_legend_handles_labels()
    ax.legend(lines[0] + more[0], lines[1] + more[1], loc="upper center", fontsize=9)
    ax.set_title("the trade: k SMs for the urgent kernel, SMs - k for the background",
                 loc="left", fontsize=11.5)


def draw(results, out):
    report = results.report("lab14")
    bars, points = ways(report), sweep(report)
    sms = report.value("device", "sm_count")
    fig, (left, right) = style.figure(13.5, 6.2, ncols=2, gridspec_kw={"width_ratios": [1, 1]})
    draw_ways(left, report, bars)
    draw_sweep(right, points, sms)
    style.title(fig, f"lab14: urgent work on SMs of its own (green contexts), "
                f"{report.value('device', 'partition_sms'):g} of {sms:g} SMs", results)
    code = report.exit_code
    exit_note = "" if code in (0, None) else f"; the run ended with exit {code}"
    style.footer(fig, f"bars: {report.value('parameter', 'reps'):g} launches each at moments "
                 f"spread over the background ({report.value('parameter', 'background_blocks'):g} "
                 f"blocks of {report.value('parameter', 'block_us'):g} µs), median and p5-p95; "
                 f"models from the same run's alone medians; sweep: its samples per k, the cost "
                 f"one background's time" + exit_note + style.runs_note(results, "lab14"))
    style.layout(fig)
    (_, _, same, _, _), (_, _, high, _, _), (_, _, part, _, _) = bars
    return style.save(fig, out, NAME), (
        f"same {same[0]:.0f} us, greatest {high[0]:.1f} us, partition {part[0]:.1f} us; "
        f"k {points[0][0]}-{points[-1][0]}: cost {points[0][2]:.2f}x-{points[-1][2]:.2f}x")
