"""What every PyTorch companion (labs/labNN_topic/torch_labNN.py) shares.

A companion shows its C lab's effect again through torch.cuda: the same
question, a prediction, a measurement, a verdict, and the labs' exit codes.
This module holds the plumbing, once: the options (--quick, --json, --reps),
the one-line exit 3 where PyTorch or a GPU is missing, the report, event
timing, and a kernel of known duration.

Timing rules (shared/DESIGN.md), as PyTorch spells them:
  - torch.cuda.Event(enable_timing=True) recorded in the stream whose work it
    brackets; the host clock only around a synchronisation;
  - a warm-up of every variant before it is timed: under CUDA's lazy module
    loading (the default since CUDA 12) the first launch of a kernel loads
    it, and that may synchronise the whole device;
  - the median of --reps samples.

A verdict not observed is measured again (Lab.__init__): the companion runs as
a child of itself, and a child whose checks held but whose effect was not seen
(exit 4) is run again from the start, at most ATTEMPTS times in all, as the C
labs' lab_attempt() re-measures a failed comparison. Another process on the
GPU, its link or the host can slow one side of a comparison for a moment; a
new attempt measures both sides afresh and never reuses a number, so no
verdict passes on a retry alone. The report names every earlier attempt's
misses.
"""
import argparse
import ctypes
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
import warnings

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _read(path):
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        return f.read()


# The exit codes and their meanings have one home, common/exitcodes.h and
# common/check.c, which the C labs compile: read them from there.
EXIT = {k: int(v) for k, v in re.findall(r"\b(EXIT_\w+)\s*=\s*(\d+)", _read("common/exitcodes.h"))}
MEANING = {EXIT[k]: v for k, v in re.findall(r'case (EXIT_\w+): return "([^"]*)"', _read("common/check.c"))}


class _Parser(argparse.ArgumentParser):
    """Usage errors as the C labs print them: one line naming the option, exit 2."""

    def error(self, message):
        message = re.sub(r"^argument (\S+?)(/\S+)?: ", r"\1 ", message)
        print(f"{self.prog}: {message}", file=sys.stderr)
        sys.exit(EXIT["EXIT_USAGE"])


def integer(low, high):
    """An argparse type: an integer from LOW to HIGH, or the labs' usage message."""
    def parse(text):
        try:
            value = int(text)
        except ValueError:
            value = None
        if value is None or not low <= value <= high:
            raise argparse.ArgumentTypeError(f"must be an integer from {low} to {high} (got '{text}')")
        return value
    return parse


# At most this many attempts at a companion whose effect was not seen: the
# first and two more, as lab_attempt()'s default --retries 2 in the C labs.
ATTEMPTS = 3
# The environment variable by which the first process tells a child which
# attempt it is, what the earlier ones missed, and where to leave its report.
ATTEMPT_ENV = "STREAMLAB_TORCH_ATTEMPT"


def _attempts(name, json_out):
    """Runs this companion as a child, again while it exits 4 (its results
    right, its effect not seen) and attempts remain; returns the last child's
    exit code. The children print the human report as they go; the JSON
    document (--json) is the last child's, printed here once."""
    earlier, doc = [], None
    for attempt in range(1, ATTEMPTS + 1):
        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, "report.json")
            env = dict(os.environ, **{ATTEMPT_ENV: json.dumps(
                {"attempt": attempt, "earlier": earlier, "report": path})})
            try:
                code = subprocess.run([sys.executable, *sys.orig_argv[1:]], env=env).returncode
            except KeyboardInterrupt:
                return 130
            if code < 0:   # killed by a signal: the status a shell would give
                return 128 - code
            doc = None   # a child that stopped before its report (exit 2, 3, a crash) left none
            if os.path.exists(path):
                with open(path, encoding="utf-8") as f:
                    doc = json.load(f)
        if code != EXIT["EXIT_NOT_OBSERVED"] or doc is None or attempt == ATTEMPTS:
            break
        missed = [v for v in doc["verdict"]["items"] if not v["observed"]]
        earlier.append(missed)
        if not json_out:
            print(f"{name}: not observed in attempt {attempt} of {ATTEMPTS} "
                  f"({', '.join(v['name'] for v in missed)}): measuring everything again from "
                  "the start, in case another process slowed one side for a moment\n", flush=True)
    if json_out and doc is not None:
        print(json.dumps(doc, indent=1))
    return code


def _attempt_given():
    """The attempt _attempts() handed this process, or None in the first one
    (or where the variable holds anything else: then this is a first one)."""
    try:
        given = json.loads(os.environ[ATTEMPT_ENV])
        return given if {"attempt", "earlier", "report"} <= set(given) else None
    except (KeyError, ValueError, TypeError):
        return None


def cannot_run(name, why):
    print(f"{name}: cannot run here: {why}", file=sys.stderr)
    sys.exit(EXIT["EXIT_CANNOT_RUN"])


def _torch_or_exit(name):
    """PyTorch with a usable GPU, or exit 3 with one line saying which is missing."""
    with warnings.catch_warnings():  # a warning (no NumPy, no driver) would be a second line
        warnings.simplefilter("ignore")
        try:
            import torch
        except ImportError:
            cannot_run(name, f"PyTorch is not installed for {sys.executable} (optional: pip install torch)")
        if torch.version.cuda is None:
            cannot_run(name, f"PyTorch {torch.__version__} was built without CUDA")
        usable = torch.cuda.is_available() and torch.cuda.device_count() > 0
    if not usable:
        cannot_run(name, "no usable GPU: torch.cuda.is_available() is False")
    return torch


class Lab:
    """One companion's run: options, report, verdicts and exit code.

    begin() parses the options before PyTorch is imported, so --help and
    usage errors work on any machine."""

    def __init__(self, name, title, reps, quick_reps, options=None, before_torch=None):
        parser = _Parser(prog=name, description=title)
        parser.add_argument("--quick", action="store_true", help=f"small sizes, under a few seconds (--reps {quick_reps})")
        parser.add_argument("--json", action="store_true", help="one JSON document instead of the report")
        parser.add_argument("--reps", type=integer(1, 1000), help=f"timed repetitions, median reported (default {reps})")
        if options:
            options(parser)
        self.args = parser.parse_args()
        if self.args.reps is None:
            self.args.reps = quick_reps if self.args.quick else reps
        self.attempt = _attempt_given()   # set by _attempts() in the first process,
        if self.attempt is None:           # which measures nothing itself
            sys.exit(_attempts(name, self.args.json))
        if before_torch:  # e.g. an environment variable CUDA reads once, when its context is made
            before_torch(self.args)
        self.name, self.title = name, title
        self.torch = _torch_or_exit(name)
        self.doc = {"lab": name, "title": title, "torch": self.torch.__version__, "cuda": self.torch.version.cuda,
                    "device": self.torch.cuda.get_device_name(), "parameters": vars(self.args),
                    "measurements": [], "checks": [], "verdict": {"items": []},
                    "attempt": self.attempt["attempt"], "attempts_at_most": ATTEMPTS,
                    "earlier_misses": self.attempt["earlier"]}
        self.say(f"{name}: {title}" + (f" (attempt {self.attempt['attempt']} of {ATTEMPTS})"
                                       if self.attempt["attempt"] > 1 else ""))
        self.say(f"device: {self.doc['device']}, PyTorch {self.doc['torch']}, CUDA {self.doc['cuda']}")
        self.say(f"settings: --reps {self.args.reps}" + (" (--quick)" if self.args.quick else ""))

    def setup(self, name, value, text):
        """A fact about this machine or this PyTorch that the lesson rests on."""
        self.doc.setdefault("setup", []).append({"name": name, "value": value, "text": text})
        self.say(f"  {name:<40} {value!s:<10} {text}")

    def say(self, text=""):
        if not self.args.json:
            print(text, flush=True)

    def measured(self, what, value, unit, predicted=None, model=""):
        """One measurement, beside the model's prediction when there is one."""
        self.doc["measurements"].append({"what": what, "value": value, "unit": unit,
                                         "predicted": predicted, "model": model})
        if predicted is None:
            self.say(f"  {what:<40} measured {value:10.4g} {unit}")
        else:
            ratio = value / predicted if predicted else float("nan")
            self.say(f"  {what:<40} predicted {predicted:10.4g}  measured {value:10.4g} {unit}"
                     f"  x{ratio:.2f}  = {model}")

    def check(self, name, wrong, total, what):
        """A correctness check: WRONG of TOTAL results differ from the reference."""
        self.doc["checks"].append({"name": name, "ok": wrong == 0, "wrong": wrong, "total": total})
        self.say(f"  [{'ok' if wrong == 0 else 'FAIL'}]   {name}: {wrong} of {total} {what}")

    def verdict(self, name, observed, text, limit):
        self.doc["verdict"]["items"].append({"name": name, "observed": bool(observed), "text": text, "limit": limit})
        self.say(f"  observed: {'yes' if observed else 'NO'} {name}: {text} (limit: {limit})")

    def finish(self):
        if not all(c["ok"] for c in self.doc["checks"]):
            code = EXIT["EXIT_WRONG_RESULTS"]
        elif not all(v["observed"] for v in self.doc["verdict"]["items"]):
            code = EXIT["EXIT_NOT_OBSERVED"]
        else:
            code = EXIT["EXIT_OK"]
        self.doc["verdict"]["observed"] = all(v["observed"] for v in self.doc["verdict"]["items"])
        self.doc.update(exit=code, exit_meaning=MEANING[code])
        with open(self.attempt["report"], "w", encoding="utf-8") as f:   # _attempts() reads it
            json.dump(self.doc, f)
        for n, missed in enumerate(self.attempt["earlier"], 1):
            self.say("  attempt {} of {} missed: {}".format(
                n, ATTEMPTS, "; ".join(f"{v['name']}: {v['text']} (limit: {v['limit']})" for v in missed)))
        self.say(f"result: {MEANING[code]} (exit {code})")
        sys.exit(code)

    # ---- timing --------------------------------------------------------------
    def event_ms(self, work, stream=None):
        """WORK's duration in ms from two events recorded in STREAM (default:
        the current stream), the stream the work is queued in."""
        cuda = self.torch.cuda
        stream = stream or cuda.current_stream()
        start, end = cuda.Event(enable_timing=True), cuda.Event(enable_timing=True)
        with cuda.stream(stream):
            start.record()
            work()
            end.record()
        end.synchronize()
        return start.elapsed_time(end)

    def median_ms(self, work, stream=None, warmup=1):
        for _ in range(warmup):
            self.event_ms(work, stream)
        return statistics.median(self.event_ms(work, stream) for _ in range(self.args.reps))

    def host_ms(self, work):
        """WORK's time on the host clock, from an idle GPU until every stream
        is done: the one honest clock when work spans several streams."""
        self.torch.cuda.synchronize()
        start = time.perf_counter()
        work()
        self.torch.cuda.synchronize()
        return (time.perf_counter() - start) * 1e3

    def calibrate_spin(self):
        """torch.cuda._sleep(cycles) spins one thread for CYCLES clock ticks of
        its SM. Its cycles per ms is measured here with events (a clock that
        changes under load changes it: calibrate in the run that uses it).
        Returns spin(ms), which queues a kernel of about that duration in the
        current stream."""
        probe = 10_000_000
        ms = self.median_ms(lambda: self.torch.cuda._sleep(probe), warmup=2)
        per_ms = probe / ms
        self.say(f"  spin kernel: torch.cuda._sleep runs {per_ms / 1e3:.0f} cycles per us "
                 "(the SM clock in MHz), measured with events")
        return lambda ms_: self.torch.cuda._sleep(max(1, int(ms_ * per_ms)))


class Driver:
    """The few driver-API calls torch.cuda does not expose, through ctypes on
    libcuda.so.1 (present wherever a driver is). They act in the current
    context, which is PyTorch's (the device's primary context) once PyTorch
    has used the GPU from this thread. Every call is checked."""

    NON_BLOCKING = 1  # CU_STREAM_NON_BLOCKING = cudaStreamNonBlocking

    def __init__(self):
        self.lib = ctypes.CDLL("libcuda.so.1")

    def _call(self, fn, *args):
        rc = getattr(self.lib, fn)(*args)
        if rc != 0:
            raise RuntimeError(f"{fn} failed with CUresult {rc}")

    def stream_flags(self, handle):
        flags = ctypes.c_uint()
        self._call("cuStreamGetFlags", ctypes.c_void_p(handle), ctypes.byref(flags))
        return flags.value

    def blocking_stream(self):
        """A stream as cudaStreamCreate makes it (flags 0): the legacy stream's
        barrier holds it. Wrap it in torch.cuda.ExternalStream to use it."""
        handle = ctypes.c_void_p()
        self._call("cuStreamCreate", ctypes.byref(handle), ctypes.c_uint(0))
        return handle.value

    def destroy_stream(self, handle):
        self._call("cuStreamDestroy_v2", ctypes.c_void_p(handle))

    def priority_range(self):
        """(least, greatest) stream priority of this device: lower is more urgent."""
        least, greatest = ctypes.c_int(), ctypes.c_int()
        self._call("cuCtxGetStreamPriorityRange", ctypes.byref(least), ctypes.byref(greatest))
        return least.value, greatest.value


def median(values):
    return statistics.median(values)
