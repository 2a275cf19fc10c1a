"""Building an exercise's given program around a student's file, and
running one pass of it: with a time limit, in its own process group, this
run's nonce written on its stdin, its output cut to the tail, its result line
taken only with that nonce, under compute-sanitizer memcheck when asked.
grade.py calls these; each returns what happened as a dict that goes into the
recorded outcome. Standard library only (and checks.py, beside it).
"""

import json
import os
import re
import secrets
import shlex
import shutil
import signal
import subprocess
import threading
import time
from pathlib import Path

import checks
from rubric import fmt

ROOT = Path(__file__).resolve().parent.parent
BUILD_LIMIT_S = 300
KEEP_OUTPUT = 256 * 1024   # bytes of a pass's stdout and stderr kept: the tail


# ---- building a program -------------------------------------------------------------------

def first_error(log):
    """The line a student needs first: the compiler's first error."""
    lines = [line.strip() for line in log.splitlines() if line.strip()]
    for line in lines:
        if re.search(r"\berror\b|undefined reference", line, re.IGNORECASE):
            return line[:300]
    return lines[-1][:300] if lines else "the compiler failed without a message"


def _compile(cmd, cwd, log):
    """Runs one step of a build, adding its output to log[0]: True when it succeeded."""
    try:
        proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, errors="replace",
                              timeout=BUILD_LIMIT_S)
    except subprocess.TimeoutExpired:
        log[0] += f"the build took longer than {BUILD_LIMIT_S} s\n"
        return False
    log[0] += proc.stdout + proc.stderr
    return proc.returncode == 0


def build(tools, exercise, source, work):
    """Builds work/<exercise>, the exercise's program around the student's
    `source`: {"ok", "error"}. As `make exNN` does, with its flags (make
    grade-flags): the include check; the student's file compiled alone, in its
    own folder, so that messages and CUDA_CHECK name it as the student does;
    the symbol check; the link with the given objects this grading run built.
    A refusal is a build error whose reason names the file or symbol."""
    work = work.resolve()
    work.mkdir(parents=True, exist_ok=True)
    given = tools.get(f"GIVEN_{exercise}")
    if not given:
        return _build_harness(tools, exercise, source, work)
    folder, obj, log = source.resolve().parent, work / "submission.o", [""]
    flags = [tools["NVCC"], *shlex.split(tools["EX_NVCCFLAGS"])]
    try:
        refused = checks.check_includes(source.name, flags, cwd=folder)
        ok = not refused and _compile([*flags, "-c", "-o", str(obj), source.name], folder, log)
        if ok:
            refused = checks.check_symbols(obj, [given, *shlex.split(tools["DEFINERS"])],
                                           source.name)
        ok = ok and not refused and _compile(
            [*flags, "-o", str(work / exercise), given, str(obj),
             *shlex.split(tools["GRADING_OBJ"]), tools["LIB"], *shlex.split(tools["LDLIBS"])],
            ROOT, log)
    except (OSError, RuntimeError) as e:   # nm, readelf or the compiler could not run
        refused, ok = f"the checks could not run: {e}", False
    log = log[0].replace(f"{work}/", "") + (f"refused: {refused}\n" if refused else "")
    (work / "build.log").write_text(log, encoding="utf-8")
    return {"ok": ok, "error": "" if ok else refused or first_error(log)}


def _build_harness(tools, exercise, source, work):
    """Transitional, for an exercise without exercises/given/exNN.cu yet: its
    harness (grader/harness/exNN.cu) with the source included, copied in as
    submission.cu, whose #line keeps its own name in messages."""
    text = source.read_text(encoding="utf-8", errors="replace")
    (work / "submission.cu").write_text(f'#line 1 "{source.name}"\n{text}', encoding="utf-8")
    log = [""]
    ok = _compile([tools["NVCC"], *shlex.split(tools["NVCCFLAGS"]), "-I", str(work),
                   "-o", str(work / exercise), f"grader/harness/{exercise}.cu", tools["LIB"],
                   *shlex.split(tools["LDLIBS"])], ROOT, log)
    log = log[0].replace(f"{work}/", "")
    (work / "build.log").write_text(log, encoding="utf-8")
    return {"ok": ok, "error": "" if ok else first_error(log)}


# ---- running a pass ----------------------------------------------------------------------

def last_line(text):
    lines = [line.strip() for line in (text or "").splitlines() if line.strip()]
    return lines[-1][:300] if lines else ""


def _tail(stream, out):
    """Reads a pipe to its end, keeping the last KEEP_OUTPUT bytes: a program
    that prints forever cannot fill the grader's memory."""
    kept = bytearray()
    for chunk in iter(lambda: stream.read1(65536), b""):
        kept += chunk
        if len(kept) > 2 * KEEP_OUTPUT:
            del kept[:-KEEP_OUTPUT]
    out.append(bytes(kept[-KEEP_OUTPUT:]).decode("utf-8", errors="replace"))


def run_limited(cmd, limit, env, stdin_text=None):
    """Runs cmd in its own process group, stdin_text (if any) on its stdin;
    kills the group after `limit` s.
    Returns (returncode or None when timed out, stdout, stderr, seconds)."""
    start = time.monotonic()
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env,
                            stdin=subprocess.DEVNULL if stdin_text is None else subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)
    if stdin_text is not None:
        try:   # a line: it fits the pipe's buffer, so this never waits for the program
            proc.stdin.write(stdin_text.encode())
            proc.stdin.close()
        except BrokenPipeError:   # it ended before reading
            pass
    out, err = [], []
    readers = [threading.Thread(target=_tail, args=(proc.stdout, out)),
               threading.Thread(target=_tail, args=(proc.stderr, err))]
    for r in readers:
        r.start()
    try:
        rc = proc.wait(timeout=limit)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:  # it ended just now
            pass
        proc.wait()
        rc = None
    for r in readers:
        r.join()
    return rc, out[0], err[0], time.monotonic() - start


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
            first = re.sub(r"^=+ ", "", line).strip()[:300]
    return errors, first


def run_pass(config, exercise, work, pass_name, limit):
    """One pass of a built program: {"status", "detail", "seconds", "metrics"} and,
    for the check pass, "memcheck". The nonce goes on its stdin, which the
    program reads before any of the student's code runs, never into the
    environment, where the student's code could read it."""
    nonce = secrets.token_hex(16)
    env = dict(os.environ, GRADER_PASS=pass_name, GRADER_EXERCISE=exercise)
    env.pop("GRADER_NONCE", None)
    sanitizer = config["sanitizer"] if pass_name == "check" else None
    if config["fake_harness"]:
        cmd = ["sh", "-c", config["fake_harness"]]
    else:
        cmd = [str(work / exercise), "--grade"] + (["--check"] if pass_name == "check" else [])
    log = work / "memcheck.log"
    if sanitizer:
        log.unlink(missing_ok=True)
        cmd = [sanitizer, "--tool", "memcheck", "--report-api-errors", "no", "--print-limit",
               "10", "--log-file", str(log)] + cmd
    rc, out, err, seconds = run_limited(cmd, limit, env, nonce + "\n")
    (work / f"{pass_name}.stdout").write_text(out, encoding="utf-8")
    (work / f"{pass_name}.stderr").write_text(err, encoding="utf-8")
    result = {"status": "ok", "detail": "", "seconds": round(seconds, 2), "metrics": None}
    if pass_name == "check":
        result["memcheck"] = {"ran": bool(sanitizer), "errors": 0, "first": "",
                              "note": config["memcheck_note"]}
        if sanitizer and log.exists():
            errors, first = parse_memcheck(log.read_text(encoding="utf-8", errors="replace"))
            result["memcheck"].update(errors=errors, first=first)
    # the program's messages start "exNN: " ("grade-exNN: " from a transitional
    # harness): the row says which exercise already
    said = re.sub(r"^(grade-)?ex\d\d: (cannot run here: )?", "", last_line(err))
    if rc is None:
        result.update(status="timed_out", detail=f"timed out after {fmt(limit)} s")
    elif rc < 0 or (sanitizer and 128 < rc <= 128 + 64):
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
        if metrics is None:
            result.update(status="error", detail="the harness printed no result line of its "
                          "own (did the student's code exit early?)")
        result["metrics"] = metrics
    return result
