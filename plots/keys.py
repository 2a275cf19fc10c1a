"""Each lab's key number: how much faster its fix is than its trap.

KEYS below is the one table of what is compared: figure 1 draws it, and
`make results RUNS=N` prints its spread over the runs (spread.csv). The
numbers all come from the labs' CSV reports; only the choice of rows is here.
Standard library only.
"""
import statistics
from collections import namedtuple

from data import DataError

# lab: whose report; label: what the bar means (under it in figure 1);
# measured(report) and predicted(report): the speedup, a number >= 1 when the
# fix wins; predicted is None where the lab has no model of it. Each returns
# (value, note), the note naming a choice the function made.
Key = namedtuple("Key", "lab label measured predicted")


def slower_over_faster(trap, fix):
    """Speedup from times (or latencies): the trap's over the fix's."""
    return lambda r: (r.value(*trap) / r.value(*fix), None)


def faster_over_slower(trap, fix):
    """Speedup from rates (bandwidths): the fix's over the trap's."""
    return lambda r: (r.value(*fix) / r.value(*trap), None)


def best_pipeline(report):
    """lab04: the highest measured speedup of a pipelined variant, and which."""
    variants = [v for v in report.variants("speedup") if v != "pageable"]
    if not variants:
        raise DataError(f"{report.path}: no pipelined variant with a speedup row")
    best = max(variants, key=lambda v: report.value(v, "speedup"))
    return report.value(best, "speedup"), f"best: {best}"


KEYS = [
    # lab01: two 20 ms kernels in two blocking streams with a legacy-stream call
    # between them (trap: they run one after the other) against the same in
    # non-blocking streams (fix: they overlap). Model: the sum against the max.
    Key("lab01", "non-blocking streams\nvs legacy-stream barrier",
        slower_over_faster(("a blocking+legacy", "time"), ("b nonblocking+legacy", "time")),
        slower_over_faster(("a blocking+legacy", "predicted_time"),
                           ("b nonblocking+legacy", "predicted_time"))),
    # lab02: bandwidth at the largest copy, pinned (fix) over pageable (trap).
    # Model: pinned reaches the link's limit, pageable at most the slower of
    # host memcpy and the link.
    Key("lab02", "pinned vs pageable\nH2D, largest copy",
        faster_over_slower(("pageable H2D", "bandwidth"), ("pinned H2D", "bandwidth")),
        faster_over_slower(("pageable H2D", "predicted_bandwidth"),
                           ("pinned H2D", "predicted_bandwidth"))),
    Key("lab02", "pinned vs pageable\nD2H, largest copy",
        faster_over_slower(("pageable D2H", "bandwidth"), ("pinned D2H", "bandwidth")),
        faster_over_slower(("pageable D2H", "predicted_bandwidth"),
                           ("pinned D2H", "predicted_bandwidth"))),
    # lab03 is left out: its lesson is accuracy (a host clock with no wait
    # reads microseconds for a 5 ms kernel), not a speedup.
    #
    # lab04: the pipeline's speedup over the serial run, the best pipelined
    # variant measured against the model's ideal (enough streams to keep the
    # two copy engines and the SMs busy: fill + drain + steady state).
    Key("lab04", "pipelined streams\nvs one stream",
        best_pipeline, lambda r: (r.value("model", "ideal_speedup"), None)),
    # lab05: a short kernel's latency behind a busy GPU, at the same priority
    # as the background (trap) over the greatest priority (fix). Model: the
    # rest of the background against about half a block.
    Key("lab05", "high vs same priority\nlatency behind a busy GPU",
        slower_over_faster(("same priority", "latency"), ("high priority", "latency")),
        slower_over_faster(("same priority", "predicted_latency"),
                           ("high priority", "predicted_latency"))),
    # lab06: the two correct fixes of the producer-consumer race, by the host
    # time they take: cudaStreamSynchronize (blocks the host for the producer)
    # over cudaStreamWaitEvent (the host only issues the calls). The lab has
    # no model of the issue time, so no prediction.
    Key("lab06", "event wait vs stream sync\nhost time to issue",
        slower_over_faster(("host_sync", "host_issue"), ("event_wait", "host_issue")),
        None),
]


def evaluate(results):
    """Figure 1's bars: a list of dicts, and notes on labs left out."""
    bars, notes = [], []
    for key in KEYS:
        runs = results.runs(key.lab)
        if not runs:
            note = results.missing_note(key.lab)
            if note not in notes:
                notes.append(note)
            continue
        measured, choice = key.measured(runs[0])
        predicted = key.predicted(runs[0])[0] if key.predicted else None
        every = [key.measured(r)[0] for r in runs]
        bars.append({"lab": key.lab, "label": key.label, "measured": measured,
                     "predicted": predicted, "choice": choice, "runs": every,
                     "exit_code": runs[0].exit_code})
    return bars, notes


SPREAD_HEADER = ["lab", "comparison", "runs", "min", "median", "max", "predicted", "unit"]


def spread(results):
    """spread.csv's rows: each key number's min, median and max over the runs."""
    bars, notes = evaluate(results)
    rows = []
    for b in bars:
        numbers = [min(b["runs"]), statistics.median(b["runs"]), max(b["runs"]), b["predicted"]]
        rows.append([b["lab"], b["label"].replace("\n", ", "), len(b["runs"])] +
                    ["" if v is None else float(f"{v:.4g}") for v in numbers] + ["x"])
    return rows, notes
