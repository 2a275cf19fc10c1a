"""Figure 3: lab04 --sweep, the pipeline's speedup as the kernel's share of
the work grows: measured points on the model's curve, for the double buffer
(2 streams) and 4 streams with chunked batches."""
from matplotlib.ticker import FixedLocator, NullLocator

import style
from data import DataError

NAME = "3-lab04-sweep.png"
SERIES = (("2 streams", "speedup_2_streams", "2 streams (double buffer)"),
          ("4 streams", "speedup_4_streams", "4 streams, chunked batches"))


def draw(results, out):
    report = results.report("lab04-sweep")
    variants = [v for v in report.variants("kernel_to_copy") if v.startswith("sweep ")]
    if len(variants) < 2:
        raise DataError(f"{report.path}: fewer than two 'sweep <ratio>x' rows: not the "
                        f"output of lab04 --sweep --csv")
    points = sorted((report.value(v, "kernel_to_copy"), v) for v in variants)
    ratios = [r for r, _ in points]
    fig, ax = style.figure(10.5, 6)
    for key, metric, label in SERIES:
        colour = style.STREAMS[key]
        predicted = [report.value(v, "predicted_" + metric) for _, v in points]
        median, low, high = zip(*(report.stats(v, metric) for _, v in points))
        ax.plot(ratios, predicted, "--", marker="o", markerfacecolor="white", markersize=5,
                color=colour, linewidth=1.5, alpha=0.8,
                label=f"{label}: model")
        ax.errorbar(ratios, median, yerr=[[m - lo for m, lo in zip(median, low)],
                                          [hi - m for m, hi in zip(median, high)]],
                    fmt="o", color=colour, markersize=7, capsize=3,
                    label=f"{label}: measured (p5-p95)")
    ax.axhline(1, color="black", linewidth=0.8)
    ax.axvline(1, color=style.PREDICTED, linestyle=":", linewidth=1)
    ax.text(1, 0.02, "balanced: kernel = copy ", color="#555555", fontsize=9,
            transform=ax.get_xaxis_transform(), ha="right", va="bottom")
    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_locator(FixedLocator(ratios))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_xticklabels([f"{r:.2g}" for r in ratios])
    ax.set_xlabel("kernel time / H2D time per batch (measured, log scale)")
    ax.set_ylabel("speedup over the serial run (x)")
    ax.set_ylim(bottom=0)
    ax.legend(loc="lower right", fontsize=9.5)
    style.title(fig, "lab04: what overlapping buys as the compute/copy ratio changes",
                results.gpu)
    fig.tight_layout()
    return style.save(fig, out, NAME), f"{len(points)} kernel/copy ratios"
