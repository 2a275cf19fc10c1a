"""Reading a results folder: the labs' CSV reports, the meta file, a trace.

Standard library only: `make results` uses this (for the spread table) on
machines without matplotlib. Any problem with the input raises DataError
with a message that names the file, and the line where there is one; the
command line (plot.py) prints it and exits 1.
"""
import csv
import json
import math
import os
import re

HEADER = ["lab", "variant", "metric", "value", "unit"]


class DataError(Exception):
    """Input that is missing, or not what the labs write."""


class Report:
    """One --csv report: (variant, metric) -> value, plus the rows in order."""

    def __init__(self, path):
        self.path = path
        self.name = os.path.basename(path)
        self.rows = []      # (variant, metric, value, unit), value a float or a text
        self._first = {}    # (variant, metric) -> its first row
        try:
            with open(path, newline="") as f:
                lines = list(csv.reader(f))
        except FileNotFoundError:
            raise DataError(f"{path}: no such file")
        except (OSError, UnicodeDecodeError, csv.Error) as e:
            raise DataError(f"{path}: cannot be read: {e}")
        if not lines:
            raise DataError(f"{path}: empty (did the lab fail before its report?)")
        if lines[0] != HEADER:
            raise DataError(f"{path} line 1: expected the header {','.join(HEADER)}, "
                            f"found {','.join(lines[0])}")
        for number, fields in enumerate(lines[1:], start=2):
            self._add(number, fields)
        if not self.rows:
            raise DataError(f"{path}: a header but no rows")

    def _add(self, number, fields):
        if len(fields) != len(HEADER):
            raise DataError(f"{self.path} line {number}: expected 5 fields "
                            f"({','.join(HEADER)}), found {len(fields)}")
        _lab, variant, metric, value, unit = fields
        if unit != "text":
            try:
                value = float(value)  # also "inf" and "nan", which %g prints
            except ValueError:
                raise DataError(f"{self.path} line {number}: value {value!r} of "
                                f"{variant},{metric} is not a number")
        row = (variant, metric, value, unit)
        self.rows.append(row)
        self._first.setdefault((variant, metric), row)

    def has(self, variant, metric):
        return (variant, metric) in self._first

    def value(self, variant, metric):
        """The number in row variant,metric; DataError when there is none."""
        row = self._first.get((variant, metric))
        if row is None:
            raise DataError(f"{self.path}: no row {variant},{metric} (written by an older "
                            f"or a different program?)")
        if isinstance(row[2], str) or not math.isfinite(row[2]):
            raise DataError(f"{self.path}: row {variant},{metric} holds {row[2]!r}, "
                            f"not a finite number")
        return row[2]

    def text(self, variant, metric):
        row = self._first.get((variant, metric))
        return row[2] if row and isinstance(row[2], str) else None

    def unit(self, variant, metric):
        self.value(variant, metric)
        return self._first[(variant, metric)][3]

    def stats(self, variant, metric):
        """(median, p5, p95) of a report_stats or report_compare row."""
        return tuple(self.value(variant, metric + suffix) for suffix in ("", "_p5", "_p95"))

    def samples(self, variant, metric):
        """Every sample report_samples wrote for variant,metric (empty if none)."""
        name = metric + "_sample"
        return [v for (var, met, v, _u) in self.rows if var == variant and met == name]

    def variants(self, metric):
        """The variants that have a row of this metric, in report order."""
        seen = []
        for variant, met, _v, _u in self.rows:
            if met == metric and variant not in seen:
                seen.append(variant)
        return seen

    def metrics(self, variant):
        return [met for (var, met, _v, _u) in self.rows if var == variant]

    @property
    def device(self):
        return self.text("device", "name")

    @property
    def exit_code(self):
        return int(self.value("result", "exit_code")) if self.has("result", "exit_code") else None


class Results:
    """A folder that `make results` wrote (or docs/results/h100)."""

    def __init__(self, folder):
        if not os.path.isdir(folder):
            raise DataError(f"{folder}: no such folder (run `make results` first, or name "
                            f"one: make plots RESULTS=docs/results/h100)")
        self.folder = folder
        self.meta = read_meta(os.path.join(folder, "meta"))
        self._reports = {}

    def path(self, name):
        return os.path.join(self.folder, name)

    def has(self, name):
        return os.path.isfile(self.path(name))

    def report(self, stem, run=1):
        """The report of program `stem` (lab02, lab04-ratio-1), first run or run N."""
        name = f"{stem}.csv" if run == 1 else f"{stem}.run{run}.csv"
        if name not in self._reports:
            if not self.has(name):
                why = self.waived(stem)
                raise DataError(f"{self.path(name)}: missing" +
                                (f": {stem} was {why}" if why else
                                 f" (is {self.folder} a folder that `make results` wrote?)"))
            self._reports[name] = Report(self.path(name))
        return self._reports[name]

    def sweep(self, stem="lab04"):
        """The runs of `stem` at several kernel ratios (make results writes
        lab04-ratio-R.csv for each R), as (R, report) sorted by R."""
        found = []
        for name in os.listdir(self.folder):
            m = re.fullmatch(re.escape(stem) + r"-ratio-([0-9.]+)\.csv", name)
            if m:
                found.append((float(m.group(1)), self.report(name[:-len(".csv")])))
        return sorted(found, key=lambda pair: pair[0])

    def runs(self, stem):
        """Every run's report of `stem`, in order: stem.csv, stem.run2.csv, ..."""
        reports, run = [], 1
        while self.has(f"{stem}.csv" if run == 1 else f"{stem}.run{run}.csv"):
            reports.append(self.report(stem, run))
            run += 1
        return reports

    def waived(self, stem):
        """The meta file's word on a lab that could not run here, or None."""
        status = self.meta.get(stem, "")
        return status if status.startswith("waived") else None

    def not_run(self, stem):
        """True when the meta file lists runs but not this one: the folder's
        make results did not run it (a lab added since, say)."""
        return bool(self.meta) and stem not in self.meta

    def missing_note(self, stem):
        why = self.waived(stem)
        if why:
            return f"{stem}: {why}"
        if self.not_run(stem):
            return f"{stem}: not run by the make results that wrote this folder (its meta file)"
        return f"{stem}: no {stem}.csv in this folder"

    @property
    def gpu(self):
        """The GPU's name: the meta file's, else the first report's device row."""
        if self.meta.get("gpu"):
            return self.meta["gpu"]
        for name in sorted(os.listdir(self.folder)):
            if name.endswith(".csv") and ".run" not in name:
                try:
                    device = Report(self.path(name)).device
                except DataError:
                    continue
                if device:
                    return device
        return "unknown GPU"

    @property
    def provenance(self):
        """Which GPU, driver, CUDA and date, as the meta file says: every
        figure and the results page carry it, so a figure that travels alone
        still says where its numbers come from."""
        if not self.meta:
            return f"{self.gpu}; no meta file in {self.folder}: driver and date unknown"
        return (f"{self.gpu}, driver {self.meta.get('driver', 'unknown')}, CUDA "
                f"{self.meta.get('cuda', 'unknown')}, {self.meta.get('date', 'date unknown')}")

    @property
    def runs_made(self):
        """How many times make results ran every lab (RUNS=N), from the meta file."""
        try:
            return max(1, int(self.meta.get("runs", "1")))
        except ValueError:
            return 1


def read_meta(path):
    """meta: one `key: value` a line (see plots/results.sh). Absent: empty."""
    meta = {}
    try:
        with open(path) as f:
            for line in f:
                key, sep, value = line.partition(":")
                if sep and not line.startswith("#"):
                    meta[key.strip()] = value.strip()
    except FileNotFoundError:
        pass
    except (OSError, UnicodeDecodeError) as e:
        raise DataError(f"{path}: cannot be read: {e}")
    return meta


def newest(parent="results"):
    """The results folder whose meta file was written last."""
    found = []
    if os.path.isdir(parent):
        for name in os.listdir(parent):
            meta = os.path.join(parent, name, "meta")
            if not name.startswith(".") and os.path.isfile(meta):
                found.append((os.path.getmtime(meta), os.path.join(parent, name)))
    if not found:
        raise DataError(f"no results in {parent}/ yet: run `make results` first, or name a "
                        f"folder: make plots RESULTS=docs/results/h100")
    return max(found)[1]


# ---- the Chrome trace that --trace FILE.json writes (common/trace.c) --------------------

class Trace:
    """Tracks (one per stream), the variants' spans, GPU operations, host waits.

    Times in the file are microseconds; here they are kept as they are.
    """

    def __init__(self, path):
        self.path = path
        try:
            with open(path) as f:
                doc = json.load(f)
        except FileNotFoundError:
            raise DataError(f"{path}: no such file")
        except (OSError, UnicodeDecodeError, ValueError) as e:
            raise DataError(f"{path}: not a Chrome trace (JSON): {e}")
        events = doc.get("traceEvents") if isinstance(doc, dict) else None
        if not isinstance(events, list):
            raise DataError(f"{path}: no traceEvents list: not a trace that --trace wrote")
        self.dropped = (doc.get("otherData") or {}).get("dropped_records", 0)
        self.track_names, self.track_order = {}, {}
        self.spans, self.ops, self.waits = [], [], []
        self.stand_in = (doc.get("otherData") or {}).get("stand_in")
        self._flow_ends = {}  # a flow arrow's id -> its start, until its finish is read
        self.flows = []       # (from track, ts, to track, ts): a cudaStreamWaitEvent
        for n, e in enumerate(events):
            self._add(n, e)
        if not self.spans or not self.ops:
            raise DataError(f"{path}: no variants or no GPU operations in the trace")

    def _add(self, n, e):
        try:
            if e["ph"] == "M" and e["name"] == "thread_name":
                self.track_names[e["tid"]] = e["args"]["name"]
            elif e["ph"] == "M" and e["name"] == "thread_sort_index":
                self.track_order[e["tid"]] = e["args"]["sort_index"]
            elif e["ph"] == "X":
                item = {"track": e["tid"], "name": e["name"], "cat": e["cat"],
                        "start": float(e["ts"]), "end": float(e["ts"]) + float(e["dur"])}
                kind = {"variant": self.spans, "sync": self.waits}.get(e["cat"], self.ops)
                kind.append(item)
            elif e["ph"] in ("s", "f"):  # a GPU wait's arrow: its start, then its finish
                at = (e["tid"], float(e["ts"]))
                if e["ph"] == "s":
                    self._flow_ends[e["id"]] = at
                elif e["id"] in self._flow_ends:
                    self.flows.append(self._flow_ends.pop(e["id"]) + at)
        except (KeyError, TypeError, ValueError) as err:
            raise DataError(f"{self.path}: event {n} is malformed ({err!r} missing or wrong): "
                            f"{str(e)[:120]}")

    def span_names(self):
        return [s["name"] for s in self.spans]

    def span(self, name):
        # a trace keeps 63 characters of a span's name (common/trace.h):
        # a longer one, as ex01's level two has, is matched by them
        span = next((s for s in self.spans if s["name"] == name or
                     (len(s["name"]) == 63 and name.startswith(s["name"]))), None)
        if span is None:
            raise DataError(f"{self.path}: no variant '{name}' (variants: "
                            f"{', '.join(self.span_names())})")
        return span

    def host_waits(self, span_name):
        """The calls in a variant's span that blocked the host until the GPU
        was done: cuda*Synchronize. (Traces recorded before common/timeline.c
        left cudaStreamWaitEvent out, a GPU-side wait, still list it.)"""
        span = self.span(span_name)
        return [w for w in self.waits if w["name"].endswith("Synchronize")
                and span["start"] <= w["start"] < span["end"]]

    def last_run(self, span_name):
        """The GPU operations of the last run inside a variant's span.

        A span holds the warm-up and every timed run; the lab waits for each
        run with one cudaEventSynchronize (lab04's run_once), so the ends of
        those waits divide the span into runs. The last run is a timed one.
        """
        span = self.span(span_name)
        inside = [o for o in self.ops if span["start"] <= o["start"] < span["end"]]
        if not inside:
            raise DataError(f"{self.path}: variant '{span_name}' has no GPU operations")
        ends = sorted(w["end"] for w in self.waits if w["name"] == "cudaEventSynchronize"
                      and span["start"] <= w["end"] <= span["end"])
        last_op_start = max(o["start"] for o in inside)
        begin = max([t for t in ends if t <= last_op_start], default=span["start"])
        return sorted((o for o in inside if o["start"] >= begin), key=lambda o: o["start"])

    def runs(self, span_name):
        """The GPU operations of a variant's span, cut into runs at the end of
        every host wait (cuda*Synchronize) inside it that left the GPU idle:
        the exercises time each run from an idle GPU to such a wait. A wait
        with work still running when it returned (an event of the run's
        first item, say) is inside a run, not between two. In span order;
        empty runs left out."""
        span = self.span(span_name)
        inside = [o for o in self.ops if span["start"] <= o["start"] < span["end"]]
        cuts = sorted(w["end"] for w in self.host_waits(span_name)
                      if all(o["end"] <= w["end"] for o in inside if o["start"] < w["end"]))
        runs = {}
        for o in inside:
            runs.setdefault(sum(1 for t in cuts if t <= o["start"]), []).append(o)
        return [sorted(ops, key=lambda o: o["start"]) for _, ops in sorted(runs.items())]
