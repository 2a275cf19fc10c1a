"""Figure 3: lab04 at kernel ratios from 1/8 to 8 (make results runs it once
per ratio, lab04-ratio-R.csv), the pipeline's speedup as the kernel's share
of the work grows: measured points on the model's curve, for the double
buffer (2 streams) and 4 streams with chunked batches."""
import style
from data import DataError

NAME = "3-lab04-sweep.png"
# (colour key, lab04's variant, legend)
SERIES = (("2 streams", "double buffered", "2 streams (double buffer)"),
          ("4 streams", "4 streams depth", "4 streams, chunked batches"))


def kernel_to_copy(report):
    """The ratio the run measured: its kernel's time over its upload's."""
    return report.value("kernel", "time") / report.value("H2D", "time")


def draw(results, out):
    runs = results.sweep("lab04")
    if len(runs) < 2:
        raise DataError(f"{results.folder}: fewer than two lab04-ratio-R.csv reports (make "
                        f"results writes one per kernel ratio)")
    points = sorted(((kernel_to_copy(report), report) for _, report in runs), key=lambda p: p[0])
    ratios = [r for r, _ in points]
    fig, ax = style.figure(10.5, 6)
    for key, variant, label in SERIES:
        colour = style.STREAMS[key]
        predicted = [report.value(variant, "predicted_speedup") for _, report in points]
        median, low, high = zip(*(report.stats(variant, "speedup") for _, report in points))
        ax.plot(ratios, predicted, "--", marker="o", markerfacecolor="white", markersize=5,
                color=colour, linewidth=1.5, alpha=0.8, label=f"{label}: model")
        ax.errorbar(ratios, median, yerr=[[m - lo for m, lo in zip(median, low)],
                                          [hi - m for m, hi in zip(median, high)]],
                    fmt="o", color=colour, markersize=7, capsize=3,
                    label=f"{label}: measured (p5-p95)")
    ax.axhline(1, color="black", linewidth=0.8)
    ax.axvline(1, color=style.PREDICTED, linestyle=":", linewidth=1)
    ax.text(1, 0.02, "balanced: kernel = copy ", color="#555555", fontsize=9,
            transform=ax.get_xaxis_transform(), ha="right", va="bottom")
    style.swept_axis(ax, ratios, lambda r: f"{r:.2g}")
    ax.set_xlabel("kernel time / H2D time per batch (measured, log scale)")
    ax.set_ylabel("speedup over the serial run (x)")
    ax.set_ylim(bottom=0)
    ax.legend(loc="lower right", fontsize=9.5)
    style.title(fig, "lab04: what overlapping buys as the compute/copy ratio changes", results)
    style.footer(fig, "each point: one run's median speedup, its bars that run's p5-p95"
                 + style.runs_note(results, "lab04"))
    style.layout(fig)
    return style.save(fig, out, NAME), f"{len(points)} kernel/copy ratios"
