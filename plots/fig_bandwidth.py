"""Figure 2: lab02's bandwidth by copy size, H2D and D2H, for each kind of
host memory, with the link's limit and the host memcpy the model gives
pageable copies (a rate it measured, not a bound: the driver's staging is
not one plain memcpy, and pageable copies can run above or below it)."""
from matplotlib.ticker import FixedLocator, NullLocator

import style
from data import DataError

NAME = "2-lab02-bandwidth.png"
KINDS = ("pageable", "registered", "pinned")
KIND_LABEL = {"pageable": "pageable (malloc)", "registered": "registered (cudaHostRegister)",
              "pinned": "pinned (cudaMallocHost)"}
PREFIX = "bandwidth@"
DIRECTION = {"H2D": "host to device", "D2H": "device to host"}
# What lab02 times as "host memcpy": the copy the driver's staging adds.
STAGING = {"H2D": "pageable to pinned", "D2H": "pinned to pageable"}


def sweep(report, variant):
    """[(bytes, median, p5, p95)] of one kind and direction, by size."""
    points = []
    for metric in report.metrics(variant):
        if metric.startswith(PREFIX) and metric[len(PREFIX):].isdigit():
            median, p5, p95 = report.stats(variant, metric)
            points.append((int(metric[len(PREFIX):]), median, p5, p95))
    return sorted(points)


def draw(results, out):
    report = results.report("lab02")
    fig, axes = style.figure(13, 5.8, ncols=2, sharey=True)
    sizes = set()
    largest = style.bytes_label(int(report.value("parameter", "largest_copy")))
    for ax, direction in zip(axes, DIRECTION):
        for kind in KINDS:
            points = sweep(report, f"{kind} {direction}")
            if not points:
                raise DataError(f"{report.path}: no {PREFIX}<bytes> rows for "
                                f"'{kind} {direction}' (the size sweep of lab02 --csv)")
            sizes.update(p[0] for p in points)
            x = [p[0] for p in points]
            ax.fill_between(x, [p[2] for p in points], [p[3] for p in points],
                            color=style.MEMORY[kind], alpha=0.15, linewidth=0)
            ax.plot(x, [p[1] for p in points], style.MEMORY_LINE[kind],
                    marker=style.MEMORY_MARKER[kind], markersize=4, color=style.MEMORY[kind],
                    label=KIND_LABEL[kind])
        link = report.value(f"link {direction}", "bandwidth")
        # lab02 times the link apart from the sweep (as lab00 does): a fresh
        # machine's link can read below what the sweep reaches moments later
        # (D2H 47.8 against 55 GB/s, 2026-11-23), so the label says when it was timed
        limit_line(ax, link, f"the link, timed apart (as lab00): {link:.1f} GB/s",
                   color=style.LIMIT, linestyle="--", linewidth=1.2)
        host = host_memcpy(report, direction)
        limit_line(ax, host, f"host memcpy {host:.1f} GB/s: {STAGING[direction]}, {largest},\n"
                   "one thread (the model's rate for pageable copies)",
                   color=style.PREDICTED, linestyle=":", linewidth=1.8, text_colour="#555555")
        ax.set_title(f"{direction}: {DIRECTION[direction]}")
        ax.set_xscale("log", base=2)
        ax.set_xlabel("copy size (log scale)")
        ax.legend(loc="center right", fontsize=9.5)  # large copies, between the curves
    ticks = sorted(sizes)[::2] if len(sizes) > 10 else sorted(sizes)
    for ax in axes:
        ax.xaxis.set_major_locator(FixedLocator(ticks))
        ax.xaxis.set_minor_locator(NullLocator())
        ax.set_xticklabels([style.bytes_label(t) for t in ticks], rotation=45, ha="right")
    axes[0].set_ylabel("bandwidth (GB/s; median, band p5-p95)")
    top = max(report.value(f"link {d}", "bandwidth") for d in DIRECTION)
    axes[0].set_ylim(0, top * 1.12)
    style.title(fig, "lab02: bandwidth by copy size and host memory", results)
    style.footer(fig, f"each point: the median of {samples(report)}, the band its p5-p95"
                 + style.runs_note(results, "lab02"))
    style.layout(fig)
    return style.save(fig, out, NAME), None


def samples(report):
    reps = report.value("parameter", "reps") if report.has("parameter", "reps") else None
    return f"{reps:g} timed samples" if reps else "the timed samples"


def host_memcpy(report, direction):
    """The host's staging copy: per direction since lab02 measured both ways,
    one `host memcpy` row in reports from before."""
    variant = f"host memcpy {direction}"
    return report.value(variant if report.has(variant, "bandwidth") else "host memcpy",
                        "bandwidth")


def limit_line(ax, y, text, text_colour=None, **line):
    """A horizontal limit, labelled at the left where the curves are still
    low; the curves stay drawn on top of the line and its label."""
    ax.axhline(y, zorder=1, **line)
    ax.text(0.01, y, text, transform=ax.get_yaxis_transform(), va="bottom", fontsize=9.5,
            color=text_colour or line["color"], zorder=1.5,
            bbox={"facecolor": "white", "alpha": 0.75, "edgecolor": "none", "pad": 1})
