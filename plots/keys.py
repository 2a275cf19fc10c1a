"""Each lab's key number: how much faster its fix is than its trap.

KEYS below is the one table of what is compared: figure 1 draws it, and
`make results RUNS=N` prints its spread over the runs (spread.csv); lab06,
whose two fixes differ in host time rather than speed, is HOST_TIME. The
numbers all come from the labs' CSV reports; only the choice of rows is here.
Standard library only.
"""
import statistics
from collections import namedtuple

from data import DataError

# lab: whose report; label: what the bar means (under it in figure 1);
# measured(report) and predicted(report): the speedup, a number >= 1 when the
# fix wins; predicted is None where the lab has no model of it. Each returns
# (value, note, (p5, p95)): the note names a choice the function made, and
# the pair is the value's range within the report's own p5-p95 (None for a
# prediction).
Key = namedtuple("Key", "lab label measured predicted")


def slower_over_faster(trap, fix):
    """Speedup from times (or latencies): the trap's over the fix's."""
    return lambda r: (r.value(*trap) / r.value(*fix), None,
                      band(r, trap, fix, lambda t, f: t / f))


def faster_over_slower(trap, fix):
    """Speedup from rates (bandwidths): the fix's over the trap's."""
    return lambda r: (r.value(*fix) / r.value(*trap), None,
                      band(r, trap, fix, lambda t, f: f / t))


def band(report, trap, fix, ratio):
    """The ratio's range when each side lies anywhere in its own p5-p95 (one
    run's spread, as its CSV gives it); None where a side has no percentiles
    (a prediction)."""
    sides = []
    for variant, metric in (trap, fix):
        if not report.has(variant, metric + "_p5"):
            return None
        sides.append((report.value(variant, metric + "_p5"), report.value(variant, metric + "_p95")))
    ends = [ratio(t, f) for t in sides[0] for f in sides[1]]
    return min(ends), max(ends)


def best_pipeline(report):
    """lab04: the highest measured speedup of a pipelined variant, and which."""
    variants = [v for v in report.variants("speedup") if v != "pageable"]
    if not variants:
        raise DataError(f"{report.path}: no pipelined variant with a speedup row")
    best = max(variants, key=lambda v: report.value(v, "speedup"))
    return report.value(best, "speedup"), f"best: {best}", report.stats(best, "speedup")[1:]


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
        best_pipeline, lambda r: (r.value("model", "ideal_speedup"), None, None)),
    # lab05: a short kernel's latency behind a busy GPU, at the same priority
    # as the background (trap) over the greatest priority (fix). Model: the
    # rest of the background against about half a block.
    Key("lab05", "high vs same priority\nlatency behind a busy GPU",
        slower_over_faster(("same priority", "latency"), ("high priority", "latency")),
        slower_over_faster(("same priority", "predicted_latency"),
                           ("high priority", "predicted_latency"))),
    # lab06 is not here: the host time of its two fixes differs by the lab's
    # own --spin-ms (the producer's delay) over an issue time, a ratio any
    # --spin-ms would change. Figure 1 draws them apart (HOST_TIME).
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
        measured, choice, p5_p95 = key.measured(runs[0])
        predicted = key.predicted(runs[0])[0] if key.predicted else None
        every = [key.measured(r)[0] for r in runs]
        bars.append({"lab": key.lab, "label": key.label, "measured": measured,
                     "predicted": predicted, "choice": choice, "runs": every,
                     "p5_p95": p5_p95, "exit_code": runs[0].exit_code})
    return bars, notes


# lab06: how long the host spends handing the producer's result to the
# consumer, each correct way: (label, variant). cudaStreamSynchronize blocks
# the host for the producer (its model: --spin-ms, the row
# predicted_host_blocked); cudaStreamWaitEvent leaves the wait to the GPU,
# so the host only issues the calls (no row: the model is "not blocked").
HOST_TIME = ("lab06", (("stream sync\n(cudaStreamSynchronize)", "host_sync"),
                       ("event wait\n(cudaStreamWaitEvent)", "event_wait")))


def host_time(results):
    """lab06's two hand-offs: a list of dicts (empty without lab06.csv)."""
    lab, ways = HOST_TIME
    runs = results.runs(lab)
    if not runs:
        return []
    first = runs[0]
    return [{"lab": lab, "label": label, "variant": v,
             "measured": first.value(v, "host_issue"),
             "p5_p95": first.stats(v, "host_issue")[1:],
             "predicted": first.value(v, "predicted_host_blocked")
             if first.has(v, "predicted_host_blocked") else None,
             "runs": [r.value(v, "host_issue") for r in runs], "exit_code": first.exit_code}
            for label, v in ways]


SPREAD_HEADER = ["lab", "comparison", "runs", "min", "median", "max", "predicted", "unit"]


def spread(results):
    """spread.csv's rows: each key number's min, median and max over the runs."""
    bars, notes = evaluate(results)
    rows = []
    for unit, every in (("x", bars), ("ms", host_time(results))):
        for b in every:
            numbers = [min(b["runs"]), statistics.median(b["runs"]), max(b["runs"]),
                       b["predicted"]]
            what = b["label"].replace("\n", ", ") + (", host time" if unit == "ms" else "")
            rows.append([b["lab"], what, len(b["runs"])] +
                        ["" if v is None else float(f"{v:.4g}") for v in numbers] + [unit])
    return rows, notes
