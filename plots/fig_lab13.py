"""Figure 9: lab13's bucket sweep, the overlapped backward pass's speedup
over the serial one (every layer, then one all-reduce) against the bucket
size: measured beside the model (bucket k starts when its last layer and
bucket k-1 are done), the U of tiny buckets paying alpha per call and one
bucket waiting for the last layer. Beside it part 4: the same overlap with
the layers on half the SMs, a block beside each SM, every SM held (with
NCCL at the greatest priority too: NCCL's kernels need SMs, priority makes
none), and a slow link (a communicator of maxCTAs blocks) against the full one."""
import re

import style
from data import DataError

NAME = "9-lab13-buckets.png"
# the sweep's variants, matched whole: part 4's "every SM held, bucket 25 MiB" is not one
BUCKET = re.compile(r"bucket ([0-9.]+) MiB")
WIDTH = 0.38
# a number on white, so that a line passing behind it (the 1x line, the model's)
# does not cross it out
ON_WHITE = {"boxstyle": "square,pad=0.1", "fc": "white", "ec": "none"}


def sweep(report):
    """[(MiB, (median, p5, p95), predicted)] of every bucket size, smallest first."""
    found = []
    for variant in report.variants("speedup"):
        m = BUCKET.fullmatch(variant)
        if m:
            found.append((float(m.group(1)), report.stats(variant, "speedup"),
                          report.value(variant, "predicted_speedup")))
    if len(found) < 2:
        raise DataError(f"{report.path}: fewer than two 'bucket N MiB' speedup rows: not "
                        f"lab13's two-GPU report")
    return sorted(found)


def part4(report):
    """Part 4's two groups: [(title, [(name, tick label, (median, p5, p95), predicted)])]."""
    half = f"bucket {report.value('parameter', 'bucket_mib'):g} MiB"  # the sweep's point
    slow = next((v for v in report.variants("speedup") if v.startswith("maxCTAs ")), None)
    if slow is None:
        raise DataError(f"{report.path}: no 'maxCTAs N' speedup row (part 4's slow link)")

    def bar(name, tick, variant):
        return (name, tick, report.stats(variant, "speedup"),
                report.value(variant, "predicted_speedup"))

    def job(layer_ms, mib):
        return (f"{report.value('parameter', 'layers'):g} x "
                f"{report.value('parameter', layer_ms):g} ms, "
                f"{report.value('parameter', mib):g} MiB")

    link = {v: f"B {report.value(v, 'B'):.0f} GB/s" for v in (slow, "full link")}
    # the SMs: half free, a block beside each, every SM held, and held with
    # NCCL at the greatest priority (the last two rows are absent from
    # results made before lab13 measured them)
    sms = [bar("half the SMs", "layers on\nhalf the SMs", half)]
    if "one block on every SM" in report.variants("speedup"):
        sms.append(bar("one block", "one block\non every SM", "one block on every SM"))
    sms.append(bar("every SM", "layers on\nevery SM", "every SM held"))
    if "every SM held, NCCL greatest" in report.variants("speedup"):
        sms.append(bar("every SM, NCCL greatest", "every SM,\nNCCL greatest\npriority",
                       "every SM held, NCCL greatest"))
    return [(f"the layers' SMs\n{job('layer_ms', 'grad_mib')}", sms),
            (f"the link\n{job('slow_layer_ms', 'slow_grad_mib')}",
             [bar(slow, f"{slow}\n{link[slow]}", slow),
              bar("full link", f"full link\n{link['full link']}", "full link")])]


def draw_sweep(ax, report, points):
    sizes = [mib for mib, _, _ in points]
    median, low, high = zip(*(s for _, s, _ in points))
    one = report.value("parameter", "grad_mib")
    default = report.value("parameter", "bucket_mib")
    ax.axhline(1, color="black", linewidth=0.9)
    ax.text(sizes[0], 1.015, "serial (1x): every layer, then one all-reduce",
            fontsize=9.5, va="bottom", ha="left")
    ax.plot(sizes, [p for _, _, p in points], "--", marker="o", markerfacecolor="white",
            color=style.PREDICTED, linewidth=1.6, markersize=6, label="model")
    ax.fill_between(sizes, low, high, color=style.MEASURED, alpha=0.25, linewidth=0,
                    label="measured p5-p95")
    ax.plot(sizes, median, "-", marker="o", color=style.MEASURED, linewidth=1.8,
            markersize=7, label="measured (median)")
    for mib, (m, lo, hi), p in points:
        # above the point, unless the model's is clearly there: then below it
        below = p > hi * 1.02
        ax.annotate(f"{m:.2f}x", (mib, lo if below else hi), xytext=(0, -9 if below else 6),
                    textcoords="offset points", ha="center", va="top" if below else "bottom",
                    fontsize=9.5, color=style.MEASURED, bbox=ON_WHITE)
    if one in sizes:
        m = median[sizes.index(one)]
        ax.annotate("one bucket:\nthe serial all-reduce,\nissued last", (one, m),
                    xytext=(-12, -44), textcoords="offset points", ha="right", fontsize=9,
                    arrowprops={"arrowstyle": "->", "color": "#555555"}, color="#333333")
    ax.axvline(default, color=style.PREDICTED, linestyle=":", linewidth=1)
    ax.text(default, 0.02, f" --bucket-mib {default:g}\n (DDP's bucket_cap_mb)",
            transform=ax.get_xaxis_transform(), fontsize=9, color="#555555",
            ha="left", va="bottom")
    style.swept_axis(ax, sizes, lambda s: f"{s:g}")
    ax.set_xlabel("bucket size (MiB, log scale)")
    ax.set_ylabel("overlapped speedup over serial (x)")
    ax.set_ylim(0, max(max(high), max(p for _, _, p in points)) * 1.18)
    ax.set_title("the bucket sweep: tiny buckets pay alpha per call, one bucket waits",
                 loc="left", fontsize=11.5)
    ax.legend(loc="upper left", fontsize=9.5)


def draw_part4(ax, groups, bucket_mib):
    xs, labels, x = [], [], 0
    for g, (_, bars) in enumerate(groups):
        for _, label, (m, lo, hi), p in bars:
            ax.bar(x - WIDTH / 2, m, WIDTH, color=style.MEASURED, zorder=3,
                   label="measured (median, p5-p95)" if x == 0 else "_")
            ax.errorbar(x - WIDTH / 2, m, yerr=[[m - lo], [hi - m]], fmt="none",
                        ecolor="black", capsize=3, zorder=4)
            ax.bar(x + WIDTH / 2, p, WIDTH, color="white", edgecolor=style.PREDICTED,
                   hatch="///", linewidth=1.2, zorder=3, label="model" if x == 0 else "_")
            ax.annotate(f"{m:.2f}x", (x - WIDTH / 2, hi), xytext=(0, 4), bbox=ON_WHITE,
                        textcoords="offset points", ha="center", fontsize=9.5, zorder=5)
            ax.annotate(f"{p:.2f}x", (x + WIDTH / 2, p), xytext=(0, 2),
                        textcoords="offset points", ha="center", fontsize=9.5,
                        color="#555555")
            xs.append(x), labels.append(label)
            x += 1
        if g < len(groups) - 1:
            ax.axvline(x - 0.35, color="#BBBBBB", linewidth=0.8)
            x += 0.3
    # above the bars: each pair's title, then the legend, clear of the numbers
    top = max(max(p, hi) for _, bars in groups for _, _, (_, _, hi), p in bars) * 1.45
    for (title, bars), first in zip(groups, (0, len(groups[0][1]))):
        ax.text((xs[first] + xs[first + len(bars) - 1]) / 2, top, title, ha="center",
                va="top", fontsize=9.5, color="#333333")
    ax.axhline(1, color="black", linewidth=0.9)
    ax.set_xticks(xs)
    ax.set_xticklabels(labels, fontsize=9.5)
    ax.set_ylim(0, top * 1.02)
    ax.grid(axis="x", visible=False)
    ax.set_ylabel("overlapped speedup over serial (x)")
    ax.set_title(f"what decides the overlap (part 4), {bucket_mib:g} MiB buckets", loc="left",
                 fontsize=11.5)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, 0.88), ncol=2, fontsize=9)


def draw(results, out):
    report = results.report("lab13")
    points, groups = sweep(report), part4(report)
    gpus = report.value("device", "gpus")
    bars = sum(len(b) for _, b in groups)  # 4, or 6 with part 4's two SM cases
    fig, (left, right) = style.figure(13.5 + 1.1 * (bars - 4), 6.2, ncols=2,
                                      gridspec_kw={"width_ratios": [3, 2 + 0.5 * (bars - 4)]})
    draw_sweep(left, report, points)
    draw_part4(right, groups, report.value("parameter", "bucket_mib"))
    best = max(points, key=lambda p: p[1][0])
    style.title(fig, f"lab13: gradient all-reduce overlapped with the backward pass, "
                f"{gpus:g} GPUs (one NCCL rank each)", results)
    reps = report.value("parameter", "reps")
    code = report.exit_code
    exit_note = "" if code in (0, None) else f"; the run ended with exit {code}"
    style.footer(fig, f"each point and bar: one run's median speedup over its serial run in "
                 f"the same rounds, band and bars its p5-p95 ({reps:g} rounds); the model "
                 f"leaves out that NCCL's kernels share the GPU: an upper bound" + exit_note
                 + style.runs_note(results, "lab13"))
    style.layout(fig)
    return style.save(fig, out, NAME), (
        f"{len(points)} bucket sizes, best {best[0]:g} MiB {best[1][0]:.2f}x "
        f"(model {best[2]:.2f}x); " + ", ".join(f"{name} {m:.2f}x" for _, bars in groups
                                               for name, _, (m, _, _), _ in bars))
