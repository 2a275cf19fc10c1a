"""What every figure shares: headless matplotlib, fonts, colours, titles.

One colour means one thing in every figure: the trap is vermillion and the
fix blue (pageable and same priority are traps; pinned and high priority are
fixes), and the three pipeline stages keep their colours wherever they appear.
The palette is Okabe and Ito's, which reads for colour-blind eyes too.
"""
import os

import matplotlib

matplotlib.use("Agg")  # no display: draw straight into PNG files
import matplotlib.pyplot as plt  # noqa: E402 (after choosing the backend)
from matplotlib.ticker import FixedLocator, NullLocator  # noqa: E402

TRAP = "#D55E00"        # vermillion: the slow way (pageable, same priority)
FIX = "#0072B2"         # blue: the fix (pinned, high priority)
REGISTERED = "#56B4E9"  # sky blue: pinned after the fact, cudaHostRegister
MEASURED = FIX
PREDICTED = "#9A9A9A"   # grey: what the model says
LIMIT = "#000000"       # black: a hard limit (the link)
STAGE = {"h2d": "#E69F00", "kernel": "#009E73", "d2h": "#CC79A7"}  # orange, green, purple
OTHER_OP = "#BBBBBB"    # memsets and other copies
STREAMS = {"2 streams": "#882255", "4 streams": "#332288"}  # wine, indigo
PAIR = {"A": "#44AA99", "B": "#DDCC77"}  # teal, sand: lab07's first and second kernel of a pair
HOST_WAIT = TRAP        # the host blocked in a cuda*Synchronize call: lab08's trap

MEMORY = {"pageable": TRAP, "registered": REGISTERED, "pinned": FIX}
MEMORY_LINE = {"pageable": "-", "registered": "--", "pinned": "-"}
MEMORY_MARKER = {"pageable": "o", "registered": "s", "pinned": "o"}

DPI = 150


def setup():
    plt.rcParams.update({
        "font.size": 11, "axes.titlesize": 13, "axes.labelsize": 11.5,
        "legend.fontsize": 10, "xtick.labelsize": 10, "ytick.labelsize": 10,
        "axes.spines.top": False, "axes.spines.right": False,
        "axes.grid": True, "grid.alpha": 0.3, "grid.linewidth": 0.6,
        "figure.dpi": DPI, "savefig.dpi": DPI,
    })


def figure(width=10.5, height=5.8, **kwargs):
    setup()
    return plt.subplots(figsize=(width, height), **kwargs)


def title(fig, what, results):
    """Every figure's title says where its numbers were measured: the GPU,
    the driver, CUDA and the date (the results folder's meta file)."""
    fig.suptitle(f"{what}\non {results.provenance}", fontsize=13)


def footer(fig, text):
    """A grey line at the bottom: the numbers' spread, and what was left out."""
    fig.text(0.01, 0.005, text, fontsize=9, color="#555555", ha="left", va="bottom", wrap=True)
    fig.footer_lines = 1 + len(text) // int(fig.get_figwidth() * 15)  # 9 pt: ~15 a inch


def layout(fig):
    """tight_layout with room at the bottom for the footer's lines."""
    lines = getattr(fig, "footer_lines", 0)
    fig.tight_layout(rect=(0, (0.01 + 0.16 * lines) / fig.get_figheight(), 1, 1))


def save(fig, folder, name):
    """Writes the PNG; returns its path."""
    path = os.path.join(folder, name)
    fig.savefig(path)
    plt.close(fig)
    return path


def swept_axis(ax, values, label):
    """A log-2 x axis ticked at the swept values alone, each written label(v):
    a sweep's points, not powers of ten, are what a reader looks up."""
    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_locator(FixedLocator(values))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_xticklabels([label(v) for v in values])


def bytes_label(n):
    """4096 -> '4 KiB', 268435456 -> '256 MiB'."""
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:g} {unit}"
        n /= 1024
    return f"{n:g} GiB"


def runs_note(results, lab):
    """With make results RUNS=N: the lab's key numbers' min to max over the
    runs (what spread.csv holds), for a figure that draws the first run."""
    if results.runs_made <= 1:
        return ""
    from keys import spread  # here, not at the top: keys reads reports, style draws
    rows, _ = spread(results)
    mine = [f"{what} {low:g}-{high:g} {unit}" for who, what, _n, low, _m, high, _p, unit in rows
            if who == lab]
    return (f"; drawn from run 1 of {results.runs_made}; over the runs: " + "; ".join(mine)
            if mine else f"; drawn from run 1 of {results.runs_made}")
