"""Building an exercise's given program around a student's file, and running
one pass of it: in the sandbox (sandbox.py: a time limit and the others,
nothing left running after it, the output cut to the tail), this run's nonce
written on its stdin, its result line taken only with that nonce, under
compute-sanitizer memcheck when asked; and the GPU probe that says whether
grading can happen here at all, and which device node a worker's sandbox
needs. grade.py calls these; each returns what happened as a dict that goes
into the recorded outcome, every message from the student's code or its
build made printable() first. Standard library only (and checks.py, beside
it, which runs in the sandbox).
"""

import json
import os
import re
import secrets
import shlex
import shutil
import signal
import sys
import tempfile
import time
from pathlib import Path

import sandbox
import workers
from reports import printable
from rubric import FLAGGED, fmt

ROOT = Path(__file__).resolve().parent.parent
CHECKS = Path(__file__).resolve().parent / "checks.py"   # run in the sandbox, as make runs it
BUILD_LIMIT_S = 300
PROBE_LIMIT_S = 60


# ---- building a program -------------------------------------------------------------------

def first_error(log):
    """The line a student needs first: the compiler's first error."""
    lines = [line.strip() for line in log.splitlines() if line.strip()]
    for line in lines:
        if re.search(r"\berror\b|undefined reference", line, re.IGNORECASE):
            return printable(line)
    return printable(lines[-1]) if lines else "the compiler failed without a message"


def write_log(path, text):
    """Writes a log the grader keeps in a folder a sandbox wrote in: a fresh
    file, never through a link left there."""
    path.unlink(missing_ok=True)
    with open(path, "x", encoding="utf-8") as f:
        f.write(text)


def c_string(text):
    """text inside a C string literal: a file name with a quote, a backslash or
    a control character in it would end #line's string or the line early."""
    return "".join(f"\\{ord(c):03o}" if ord(c) < 32 or c == "\x7f" else
                   "\\" + c if c in '"\\' else c for c in text)


def build(tools, exercise, source, work, box):
    """Builds work/<exercise>, the exercise's given program around the
    student's `source`, in the sandbox `box` with `work` its scratch folder:
    {"ok", "error"}. As `make exNN` does, with its flags (make grade-flags):
    the include check, the student's file compiled alone, the symbol check,
    the link with the given objects this grading run built (OUT/_build, which
    the sandbox sees read-only). The source is copied in as submission.cu,
    whose #line keeps its own name in the compiler's messages and CUDA_CHECK's
    (its folder's name may hold what nvcc's shell steps cannot take); the
    checks run on that copy, in the sandbox too: they run the compiler and nm.
    A refusal is a build error whose reason names the file or symbol."""
    work.mkdir(parents=True, exist_ok=True)
    text = source.read_text(encoding="utf-8", errors="replace")
    copy, obj, program = work / "submission.cu", work / "submission.o", work / exercise
    write_log(copy, f'#line 1 "{c_string(source.name)}"\n{text}')
    given = tools[f"GIVEN_{exercise}"]
    flags = [tools["NVCC"], *shlex.split(tools["EX_NVCCFLAGS"])]
    check = ["python3", str(CHECKS)]   # the system's: the sandbox has no other
    steps = [
        ("check", [*check, "includes", "--source", source.name, str(copy), "--", *flags]),
        ("compile", [*flags, "-c", "-o", str(obj), str(copy)]),
        ("check", [*check, "symbols", "--source", source.name, str(obj), "--", given,
                   *shlex.split(tools["DEFINERS"])]),
        ("compile", [*flags, "-o", str(program), given, str(obj),
                     *shlex.split(tools["GRADING_OBJ"]), tools["LIB"],
                     *shlex.split(tools["LDLIBS"]),
                     *shlex.split(tools.get(f"LIBS_{exercise}", ""))]),   # ex13: NCCL
    ]
    log, error, deadline = "", "", time.monotonic() + BUILD_LIMIT_S
    for kind, cmd in steps:
        done = sandbox.run(box, cmd, max(1.0, deadline - time.monotonic()), work,
                           files=[CHECKS] if kind == "check" else [])
        said = (done.stdout + done.stderr).replace(f"{work}/", "")
        log += said
        if done.stopped:
            error = f"the build {done.why}"
        elif done.returncode != 0 and kind == "compile":
            error = first_error(said)
        elif done.returncode == 1:   # checks.py's refusal: one line naming the file or symbol
            error = last_line(said) or "the checks refused it without a reason"
            log += f"refused: {error}\n"
        elif done.returncode != 0:
            error = f"the checks could not run: {last_line(said) or f'exit {done.returncode}'}"
        if error:
            break
    write_log(work / "build.log", log)
    return {"ok": not error, "error": error}


# ---- running a pass ----------------------------------------------------------------------

def last_line(text):
    lines = [line.strip() for line in (text or "").splitlines() if line.strip()]
    return printable(lines[-1]) if lines else ""


def parse_result(stdout, exercise, pass_name, nonce):
    """The program's measurements: its JSON object, which must be the last line
    on stdout and carry this run's nonce. None when there is none."""
    lines = [line.strip() for line in stdout.splitlines() if line.strip()]
    if not lines:
        return None
    try:
        data = json.loads(lines[-1])
    except ValueError:
        return None
    if not isinstance(data, dict) or (data.get("exercise"), data.get("pass"),
                                      data.get("nonce")) != (exercise, pass_name, nonce):
        return None
    return {k: v for k, v in data.items() if k not in ("exercise", "pass", "nonce")}


def find_sanitizer(tools):
    """compute-sanitizer on PATH, or beside nvcc; None when neither has it."""
    found = shutil.which("compute-sanitizer")
    nvcc = shutil.which(tools.get("NVCC", "nvcc")) if tools else None
    if not found and nvcc:
        home = Path(nvcc).resolve().parent.parent
        for candidate in (home / "bin" / "compute-sanitizer",
                          home / "compute-sanitizer" / "compute-sanitizer"):
            if os.access(candidate, os.X_OK):
                return str(candidate)
    return found


def parse_memcheck(log):
    """(errors, the first error's line) from compute-sanitizer's log."""
    errors, first = 0, ""
    for line in log.splitlines():
        summary = re.search(r"ERROR SUMMARY: (\d+) error", line)
        if summary:
            errors = max(errors, int(summary.group(1)))
        elif not first and re.match(r"=+ \S", line) and "COMPUTE-SANITIZER" not in line:
            first = printable(re.sub(r"^=+ ", "", line))
    return errors, first


def run_pass(config, exercise, work, pass_name, limit):
    """One pass of a built program, in the sandbox with a scratch folder of its
    own: {"status", "detail", "seconds", "metrics"} and, for the check pass,
    "memcheck". The nonce goes on its stdin, which the program reads before any
    of the student's code runs, never into the environment, where the
    student's code could read it."""
    nonce = secrets.token_hex(16)
    # the worker's CUDA_VISIBLE_DEVICES comes with its sandbox (worker_sandbox)
    env = {"GRADER_PASS": pass_name, "GRADER_EXERCISE": exercise}
    sanitizer = config["sanitizer"] if pass_name == "check" else None
    if config["fake_harness"]:
        cmd, files = ["sh", "-c", config["fake_harness"]], []
    else:
        cmd = [str(work / exercise), "--grade"] + (["--check"] if pass_name == "check" else [])
        files = [work / exercise]
    if sanitizer:   # its log goes to a pipe the grader reads (sandbox.LOG); stream-ordered
        # races too: a cudaMallocAsync buffer freed under another stream's use (ex10)
        cmd = [sanitizer, "--tool", "memcheck", "--report-api-errors", "no",
               "--track-stream-ordered-races", "all", "--print-limit", "10",
               "--log-file", sandbox.LOG] + cmd
    scratch = Path(tempfile.mkdtemp(prefix=f"{exercise}-{pass_name}-", dir=config["scratch"]))
    try:   # under compute-sanitizer too, the program reads the nonce from this stdin
        done = sandbox.run(config["sandbox"], cmd, limit, scratch, files=files, env=env,
                           stdin=f"{nonce}\n".encode())
    finally:
        sandbox.remove(scratch)
    out, err, rc = done.stdout, done.stderr, done.returncode
    write_log(work / f"{pass_name}.stdout", out)
    write_log(work / f"{pass_name}.stderr", err)
    result = {"status": "ok", "detail": "", "seconds": round(done.seconds, 2), "metrics": None}
    if pass_name == "check":
        result["memcheck"] = {"ran": bool(sanitizer), "errors": 0, "first": "",
                              "note": config["memcheck_note"]}
        if sanitizer:
            write_log(work / "memcheck.log", done.log)
            errors, first = parse_memcheck(done.log)
            result["memcheck"].update(errors=errors, first=first)
    # the program's messages start "exNN: ": the row says which exercise already
    said = re.sub(r"^ex\d\d: (cannot run here: )?", "", last_line(err))
    if done.stopped == "time":
        result.update(status="timed_out", detail=f"timed out after {fmt(limit)} s")
    elif done.stopped:
        result.update(status="over_limit", detail=f"stopped: it {done.why}")
    elif done.lingered:
        result.update(status="error", detail="processes it started were still there "
                      f"{sandbox.GONE_WAIT_S} s after it ended")
    elif rc < 0 or 128 < rc <= 128 + 64:   # bwrap and compute-sanitizer say 128 + the signal
        number = -rc if rc < 0 else rc - 128
        try:
            name = signal.Signals(number).name
        except ValueError:
            name = f"signal {number}"
        result.update(status="crashed", detail=f"crashed: killed by {name}"
                      + (f" (its last words: {said})" if said else ""))
    elif rc == 3:
        result.update(status="cannot_run", detail=f"cannot run here: {said or 'no reason given'}")
    elif rc != 0:
        result.update(status="error", detail=f"stopped with exit {rc}: {said or 'no message'}")
    else:
        metrics = parse_result(out, exercise, pass_name, nonce)
        seen = out.count(nonce)
        if metrics is None:
            result.update(status="error", detail="the harness printed no result line of its "
                          "own (did the student's code exit early?)")
        elif seen > 1:
            # The program prints the token once, in its last line: a second
            # copy was printed by the student's code, which found the token
            # in the program's memory (tests/fixtures/redteam/README.md). Which
            # of the two lines is the program's, nothing here can tell.
            result.update(status=FLAGGED, detail=f"the grader's token appeared {seen} times "
                          "in the output, where the program prints it once: the student's "
                          "code printed a result line of its own; flagged for the "
                          "instructor, not scored")
            metrics = None
        result["metrics"] = metrics
    return result


def probe(config, box):
    """Runs the GPU probe (or its stand-in) in `box`: (None, what it printed)
    when a GPU is usable from in there, else (why not, ""). (None, "") when
    there is no probe to run."""
    if config["fake_probe"]:
        cmd = ["sh", "-c", config["fake_probe"]]
    elif config["tools"] and config["tools"].get("PROBE"):
        cmd = [config["tools"]["PROBE"]]
    else:
        return None, ""
    scratch = Path(tempfile.mkdtemp(prefix="gpu-probe-", dir=config["scratch"]))
    try:
        done = sandbox.run(box, cmd, PROBE_LIMIT_S, scratch)
    finally:
        sandbox.remove(scratch)
    if done.returncode == 0:
        return None, done.stdout
    said = re.sub(r"^[\w-]+: (cannot run here: )?", "", last_line(done.stderr))
    if done.returncode == 3:
        return said or "the GPU probe said this machine cannot run CUDA programs", ""
    return f"the GPU probe {done.why or f'stopped with exit {done.returncode}'}" + \
        (f": {said}" if said else ""), ""


def probe_gpu(config):
    """None when a GPU is usable here, else why not: the GPU probe, run in the
    sandbox, so that it also says whether the GPU is usable from in there."""
    return probe(config, config["sandbox"])[0]


def worker_sandbox(config, gpu):
    """The sandbox of the worker on `gpu` (a CUDA_VISIBLE_DEVICES entry, "0"
    or, for an exercise that needs two, "0,1"; None: as the grader has it):
    that entry inside, and of the GPUs' device nodes only its GPUs'. Which
    node each is, the probe says, run with that GPU alone (the PCI address of
    the device CUDA gives it), and the driver's /proc/driver/nvidia/gpus maps
    it to /dev/nvidiaN and the GPU's UUID, which then names it inside (with
    its nodes alone, CUDA may number them from 0). Where any step fails (a
    stand-in probe, no driver files, a driver that wants every node), the
    worker's sandbox keeps every GPU's node, saying so when the probe failed
    with its own."""
    box = config["sandbox"]
    if gpu is None:
        return box
    box = box.on_gpu(gpu)
    if box.unsafe:
        return box
    found = []   # (/dev/nvidiaN, UUID) of each of its GPUs, in its order
    for one in gpu.split(","):
        why, said = probe(config, box.on_gpu(one))
        node = workers.device_node(said) if not why else None
        if not node or node[0] not in sandbox.gpu_nodes():
            return box
        found.append(node)
    nodes = [node for node, _ in found]
    narrow = box.on_gpu(",".join(uuid for _, uuid in found), nodes)
    why, _ = probe(config, narrow)
    if why:
        print(f"grade: [gpu {gpu}] with only {', '.join(nodes)} of the GPUs' device nodes "
              f"in the sandbox, the GPU probe failed ({why}): this worker's sandbox holds "
              "every GPU's node", file=sys.stderr)
        return box
    return narrow
