"""The sandbox around every build and run of a student's code (bubblewrap).

What a sandboxed command sees, every path at its own place:
- the system, read-only: /usr (and /bin, /lib... as the system links them), a
  few files of /etc (the loader's cache, alternatives, passwd, group), /sys
  (the CUDA driver and NVML read the GPU's PCI topology there), a /proc of its
  own, and a private /tmp and /dev/shm (tmpfs, bounded);
- /dev with null, zero, urandom... and the GPU's device nodes (GPU_NODES):
  of the numbered ones (/dev/nvidiaN, one per GPU) only the worker's GPUs'
  when the grader knows them (on_gpu), else all;
- of the project, only what a build needs (PROJECT), read-only: never
  solutions/, the grader's code and rubrics, build/, tests/ or .git;
- what the grader names: the build it made for this run (the library and
  given objects a program links, the GPU probe), the CUDA toolkit wherever
  nvcc lives, and files such as the built program or grader/checks.py, all
  read-only; and one fresh scratch
  folder, its HOME, the only writable place besides its /tmp and /dev/shm
  (everything else, the folders bwrap makes on the way to its mounts
  included, is read-only).
Paths the grader hides (the reports, the reference solutions, the rubrics,
the class folder) are covered by an empty tmpfs wherever they fall inside
something visible. Nothing else exists in there: no other student's folder.

No network (a network namespace of its own, whose loopback is down), a PID
namespace of its own (when its first process ends, the kernel ends every
other one in it: nothing a student starts outlives the run), a new session
(no terminal to push keys into), and it dies with the grader. The
environment is a known small set (environment()).

Who runs inside: the grader's own user, in a user namespace of its own; or,
when the grader runs as root, the user nobody: bwrap, as root, makes the
mounts, then setpriv drops to nobody, so student code never runs as root and
the process limit holds (the kernel never applies RLIMIT_NPROC to root).

Limits (LIMITS), and how each holds:
- time: the caller's limit; the whole sandbox is killed at it.
- memory: the resident memory of all its processes together, read from /proc
  every TICK; over the limit, the sandbox is killed. Not RLIMIT_AS: CUDA maps
  huge virtual ranges (the GPU's memory and more, for unified addressing), so
  any address-space limit CUDA survives bounds nothing. A burst that outruns
  the watchdog meets the kernel's OOM killer first: oom_score_adj is 1000.
- processes: more than `tasks` processes and threads, and the watchdog kills
  the sandbox; between its looks, RLIMIT_NPROC stops a fork bomb at
  `tasks_ceiling` (counted in the sandbox's user namespace; with the grader
  as root, over all of nobody's processes).
- files: RLIMIT_FSIZE bounds each file; the scratch folder, /tmp and /dev/shm
  together hold at most `files` bytes in `entries` entries (the watchdog),
  and each tmpfs has its size. No core files.
- output: the last `output` bytes of stdout, stderr and the side log (LOG)
  are kept.
Standard library only.
"""

from __future__ import annotations

import copy
import dataclasses
import glob
import json
import os
import selectors
import shutil
import signal
import stat
import subprocess
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# What of the project a build needs: the library's headers, and the given
# program built around the student's file (its header, the contract). The
# grader adds grader/checks.py to the commands that run it. Missing ones are
# skipped.
PROJECT = ("common", "kernels", "exercises/given")
ETC = ("alternatives", "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "passwd", "group",
       "nsswitch.conf", "localtime")
SYSTEM_DIRS = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")   # links into /usr, or not
# What a CUDA program needs of /dev (on an H100 machine a CUDA program ran
# with nvidia0, nvidiactl and nvidia-uvm); nvidia-uvm-tools for CUPTI.
GPU_NODES = ("/dev/nvidia[0-9]*", "/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools")
NOBODY = 65534        # who student code runs as when the grader is root
INSTALL = "install bubblewrap (apt-get install bubblewrap)"
# The system's PATH inside a sandbox, where the limits' tools (util-linux) are
# found; bwrap itself is found on the grader's PATH and run by its full path.
SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin"
HELPERS = ("setpriv", "choom", "prlimit")


@dataclasses.dataclass(frozen=True)
class Limits:
    memory: int = 8 << 30          # bytes resident, all its processes together
    tasks: int = 256               # processes and threads, seen by the watchdog
    tasks_ceiling: int = 4096      # RLIMIT_NPROC, between the watchdog's looks
    file_size: int = 256 << 20     # RLIMIT_FSIZE: the largest file it may write
    files: int = 1 << 30           # bytes in its scratch folder, /tmp and /dev/shm
    entries: int = 10000           # files and folders there
    tmp: int = 1 << 30             # the size of its /tmp
    shm: int = 256 << 20           # the size of its /dev/shm
    output: int = 256 << 10        # bytes kept of stdout, stderr and the side log: the tail


LIMITS = Limits()
TICK = 0.1              # seconds between the watchdog's looks
GONE_WAIT_S = 10        # how long a killed sandbox may take to go
LOG = object()          # in a command: the path of the side log (see run())
PAGE = os.sysconf("SC_PAGE_SIZE")


def _gib(n):
    return f"{n / (1 << 30):g} GiB" if n >= 1 << 30 else f"{n >> 20} MiB"


# ---- the command line ------------------------------------------------------------------

class Sandbox:
    """How commands are wrapped for one grading run. `readonly`: folders and
    files every command sees, read-only; `hidden`: paths no command may see;
    `bin_dirs`: folders on its PATH before the system's (the toolkit's).
    unsafe=True runs commands as they are (no sandbox could be made, and the
    grader was told to go on), with the same environment and watchdog.
    on_gpu() makes a worker's copy, for its GPUs."""

    def __init__(self, readonly=(), hidden=(), bin_dirs=(), limits=LIMITS, unsafe=False):
        self.limits = limits
        self.unsafe = unsafe
        self.user = NOBODY if os.geteuid() == 0 and not unsafe else None
        self.readonly = [Path(p).resolve() for p in readonly if Path(p).exists()]
        self.hidden = [Path(p).resolve() for p in hidden]
        self.path = ":".join([str(d) for d in bin_dirs] + [SYSTEM_PATH])
        self.tools = {name: shutil.which(name) for name in ("bwrap",)}
        self.tools.update({name: shutil.which(name, path=SYSTEM_PATH) for name in HELPERS})
        self.visible = None   # CUDA_VISIBLE_DEVICES inside; None: as the grader has it
        self.nodes = None     # the /dev/nvidiaN bound in; None: every GPU's

    def on_gpu(self, visible, nodes=None):
        """This sandbox for the worker of some GPUs (one, or the N of an
        exercise that needs N): CUDA_VISIBLE_DEVICES=visible inside and, when
        `nodes` (/dev/nvidiaN, one per GPU) are given, those alone of the
        numbered ones, so that no measurement can touch another GPU."""
        box = copy.copy(self)
        box.visible, box.nodes = visible, (tuple(nodes) if nodes else None)
        return box

    @property
    def node(self):
        """The numbered device nodes bound in, as the outcome records them
        ("/dev/nvidia0,/dev/nvidia1"); None: every GPU's."""
        return ",".join(self.nodes) if self.nodes else None

    def describe(self):
        if self.unsafe:
            return "none (--unsafe: the student's code ran as the grader, with its files)"
        who = "as nobody" if self.user is not None else "as the grader, in its own user namespace"
        return f"bubblewrap ({who})"

    def environment(self, scratch, extra=None):
        """All a sandboxed command gets of an environment."""
        env = {"PATH": self.path, "HOME": str(scratch), "TMPDIR": "/tmp", "LANG": "C.UTF-8"}
        for name in ("CUDA_VISIBLE_DEVICES", "LD_LIBRARY_PATH"):   # the driver may need them
            if name in os.environ:
                env[name] = os.environ[name]
        if self.visible is not None:   # the worker's GPU
            env["CUDA_VISIBLE_DEVICES"] = self.visible
        env.update(extra or {})
        return env

    def argv(self, cmd, scratch, files=(), info_fd=None):
        """cmd wrapped: bwrap with what it sees, then the limits that the kernel
        holds (setpriv to nobody when root, choom, prlimit)."""
        if self.unsafe:
            return list(cmd)
        made = set()
        args = [self.tools["bwrap"] or "bwrap"]
        if self.user is None:
            args += ["--unshare-all"]
        else:   # no user namespace: root makes the mounts, setpriv drops to nobody
            args += ["--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts",
                     "--unshare-cgroup-try", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
        args += ["--die-with-parent", "--new-session", "--ro-bind", "/usr", "/usr"]
        visible = [Path("/usr"), Path("/sys")]
        for name in SYSTEM_DIRS:
            host = Path("/", name)
            if host.is_symlink():
                args += ["--symlink", os.readlink(host), str(host)]
            elif host.is_dir():
                args += ["--ro-bind", str(host), str(host)]
                visible.append(host)
        args += _dirs(Path("/etc"), made)
        for name in ETC:
            args += ["--ro-bind-try", f"/etc/{name}", f"/etc/{name}"]
        args += ["--ro-bind", "/sys", "/sys", "--proc", "/proc", "--dev", "/dev"]
        for node in gpu_nodes(self.nodes):
            args += ["--dev-bind", node, node]
        args += ["--perms", "1777", "--size", str(self.limits.tmp), "--tmpfs", "/tmp",
                 "--perms", "1777", "--size", str(self.limits.shm), "--tmpfs", "/dev/shm"]
        shown = [ROOT / p for p in PROJECT if (ROOT / p).exists()] + self.readonly
        for path in shown:
            args += _dirs(path.parent, made) + ["--ro-bind", str(path), str(path)]
        visible += shown
        covered = [path for path in self.hidden   # only where something visible holds it
                   if path.exists() and any(path != v and v in path.parents for v in visible)]
        for path in covered:
            args += ["--perms", "0555", "--tmpfs", str(path)]
        for path in files:
            path = Path(path).resolve()
            args += _dirs(path.parent, made) + ["--ro-bind", str(path), str(path)]
        args += _dirs(Path(scratch).parent, made) + ["--bind", str(scratch), str(scratch)]
        # the folders bwrap made on the way to each mount, its /dev (the nodes
        # are mounts of their own) and the empty tmpfs over what is hidden
        # would be its own to write in: read-only too
        args += _dirs(ROOT, made)
        for path in ["/", "/dev"] + covered:
            args += ["--remount-ro", str(path)]
        args += ["--chdir", str(ROOT)]
        if info_fd is not None:
            args += ["--info-fd", str(info_fd)]
        args.append("--")
        tool = {name: self.tools[name] or name for name in HELPERS}
        if self.user is not None:
            args += [tool["setpriv"], f"--reuid={self.user}", f"--regid={self.user}",
                     "--clear-groups", "--no-new-privs", "--inh-caps=-all", "--"]
        lim = self.limits
        args += [tool["choom"], "-n", "1000", "--",
                 tool["prlimit"], f"--nproc={lim.tasks_ceiling}", "--core=0",
                 f"--fsize={lim.file_size}", "--"]
        return args + list(cmd)


def _dirs(path, made):
    """--dir for path and each folder above it not made yet, readable by all:
    bwrap run as root makes the folders on the way to a mount 0700, which
    nobody could not pass."""
    args = []
    for p in list(reversed(path.parents)) + [path]:
        if p != Path("/") and p not in made:
            made.add(p)
            args += ["--perms", "0755", "--dir", str(p)]
    return args


def gpu_nodes(only=None):
    """The GPU device nodes here; with `only` (/dev/nvidiaN, one or more),
    those of the numbered ones (a GPU each) and every other node (the
    driver's own)."""
    found = {p for pattern in GPU_NODES for p in glob.glob(pattern)}
    if only is not None:
        numbered = set(glob.glob(GPU_NODES[0]))
        found = (found - numbered) | (set(only) & numbered)
    return sorted(found)


def check():
    """None when a sandbox can be made here; else why not, and what to install."""
    box = Sandbox()
    if not box.tools["bwrap"]:
        return f"no bwrap on PATH: {INSTALL}"
    missing = [name for name in HELPERS if not box.tools[name]
               and (name != "setpriv" or box.user is not None)]
    if missing:
        return f"no {' or '.join(missing)} in {SYSTEM_PATH}: install util-linux"
    with tempfile.TemporaryDirectory(prefix="streamlab-sandbox-") as folder:
        scratch = Path(folder) / "scratch"
        result = run(box, ["true"], 30, scratch)
        remove(scratch)
    if result.returncode == 0:
        return None
    said = (result.stderr.strip().splitlines() or [result.why or "no message"])[-1]
    hint = ("is this a container without the right to make namespaces?" if os.geteuid() == 0
            else "are user namespaces turned off (sysctl kernel.unprivileged_userns_clone, "
            "or kernel.apparmor_restrict_unprivileged_userns on Ubuntu)?")
    return f"bwrap cannot make a sandbox here ({said[:200]}): {hint}"


# ---- running a command in it -------------------------------------------------------------

@dataclasses.dataclass
class Result:
    returncode: int | None   # None: the grader stopped it (stopped says why)
    stdout: str
    stderr: str
    log: str                 # what was written to the side log (LOG)
    seconds: float
    stopped: str = ""        # "", or time, memory, tasks, files
    why: str = ""            # the stop in words: "timed out after 20 s"
    lingered: bool = False   # processes of the sandbox were still there after it


def run(box, cmd, limit, scratch, files=(), env=None, stdin=b""):
    """Runs cmd in box with `scratch` as its writable folder (made if need be)
    and `files` visible read-only, for at most `limit` seconds, `stdin` on its
    standard input. LOG in cmd becomes the path of a pipe the grader reads: a
    log the program under a tool cannot replace or unlink, as it could a file
    (compute-sanitizer's --log-file). Returns when every process of the
    sandbox is gone (Result.lingered says when some were not)."""
    scratch = Path(scratch)
    scratch.mkdir(parents=True, exist_ok=True)
    ends = {name: os.pipe() for name in ("stdin", "stdout", "stderr", "log", "info")}
    if box.user is not None:   # so that nobody may reopen them (/dev/stderr)
        os.chown(scratch, box.user, box.user)
        for name in ("stdin", "stdout", "stderr", "log"):
            for fd in ends[name]:
                os.fchown(fd, box.user, box.user)
    log_path = f"/dev/fd/{ends['log'][1]}"
    cmd = [log_path if part is LOG else part for part in cmd]
    argv = box.argv(cmd, scratch, files, None if box.unsafe else ends["info"][1])
    start = time.monotonic()
    try:
        proc = subprocess.Popen(argv, cwd=ROOT, env=box.environment(scratch, env),
                                stdin=ends["stdin"][0], stdout=ends["stdout"][1],
                                stderr=ends["stderr"][1], start_new_session=True,
                                pass_fds=(ends["log"][1], ends["info"][1]))
    except OSError as e:
        for r, w in ends.values():
            os.close(r)
            os.close(w)
        return Result(127, "", f"cannot start {argv[0]}: {e}", "", 0.0)
    for name, (r, w) in ends.items():
        os.close(r if name == "stdin" else w)
    with os.fdopen(ends["stdin"][1], "wb") as f:   # small: fits in the pipe
        try:
            f.write(stdin)
        except BrokenPipeError:
            pass
    kept, info, stop = _watch(proc, box, scratch, limit, start,
                              {name: ends[name][0] for name in ("stdout", "stderr", "log", "info")})
    text = {name: bytes(kept[name][-box.limits.output:]).decode("utf-8", errors="replace")
            for name in ("stdout", "stderr", "log")}
    result = Result(None if stop else proc.returncode, text["stdout"], text["stderr"],
                    text["log"], time.monotonic() - start, *(stop or ("", "")))
    result.lingered = not _gone(info)
    return result


def _watch(proc, box, scratch, limit, start, streams):
    """Reads the streams to their end (keeping tails) while watching the limits;
    kills the sandbox at the first one it passes. Returns (kept, info, stop)."""
    lim = box.limits
    kept = {name: bytearray() for name in streams}
    sel = selectors.DefaultSelector()
    for name, fd in streams.items():
        os.set_blocking(fd, False)
        sel.register(fd, selectors.EVENT_READ, name)
    info, stop, ended, look = {}, None, None, start
    while sel.get_map():
        now = time.monotonic()
        if ended is None and proc.poll() is not None:
            ended = now
        if ended is None and stop is None and now >= look:
            look = now + TICK
            if now - start > limit:
                stop = ("time", f"timed out after {limit:g} s")
            else:
                stop = _over(proc.pid, box, scratch, info)
            if stop:
                _kill(proc, box)
        # the sandbox's pipes close as its namespace ends; unsandboxed, a
        # process that left may hold them: stop reading after a while
        if ended is not None and now - ended > GONE_WAIT_S:
            break
        for key, _ in sel.select(timeout=TICK):
            try:
                data = os.read(key.fd, 65536)
            except BlockingIOError:
                continue
            if not data:
                sel.unregister(key.fd)
                os.close(key.fd)
                continue
            buf = kept[key.data]
            buf += data
            if key.data == "info":   # bwrap writes it once the sandbox is made
                try:
                    info = json.loads(buf)
                except ValueError:
                    pass
            elif len(buf) > 2 * lim.output:
                del buf[:-lim.output]
    for key in list(sel.get_map().values()):
        os.close(key.fd)
    sel.close()
    if proc.poll() is None:   # it left its pipes to something else
        _kill(proc, box)
    proc.wait()
    return kept, info, stop


def _over(pid, box, scratch, info):
    """(kind, words) for the first limit the sandbox has passed, or None."""
    lim = box.limits
    resident, tasks = _usage(pid)
    if resident > lim.memory:
        return "memory", f"used more than {_gib(lim.memory)} of memory (the sandbox's limit)"
    if tasks > lim.tasks:
        return "tasks", f"started more than {lim.tasks} processes and threads (the sandbox's limit)"
    folders = [scratch]
    if info.get("child-pid") and not box.unsafe:
        inside = Path(f"/proc/{info['child-pid']}/root")
        folders += [inside / "tmp", inside / "dev" / "shm"]
    size, entries = 0, 0
    for folder in folders:
        s, n = _tree(folder, lim.entries + 1)
        size, entries = size + s, entries + n
    if size > lim.files or entries > lim.entries:
        return "files", (f"wrote more than {_gib(lim.files)} or {lim.entries} files in its scratch "
                         "folder and /tmp (the sandbox's limit)")
    return None


_seen = {"at": -1.0, "processes": {}, "children": {}}
_seen_lock = threading.Lock()


def _processes(fresh=False):
    """({pid: (parent, resident bytes, threads)}, {pid: children}) of every
    process on the machine: one reading of /proc per TICK, which every
    sandbox running at once shares (a class's builds run side by side)."""
    with _seen_lock:
        if fresh or time.monotonic() - _seen["at"] >= TICK:
            found, children = {}, {}
            for entry in os.scandir("/proc"):
                if entry.name.isdigit():
                    try:
                        with open(f"/proc/{entry.name}/stat", "rb") as f:
                            fields = f.read().rsplit(b")", 1)[1].split()
                        pid, parent = int(entry.name), int(fields[1])
                        found[pid] = (parent, int(fields[21]) * PAGE, int(fields[17]))
                    except (OSError, IndexError, ValueError):   # it ended meanwhile
                        continue
                    children.setdefault(parent, []).append(pid)
            _seen.update(at=time.monotonic(), processes=found, children=children)
        return _seen["processes"], _seen["children"]


def _below(pid, fresh=False):
    """pid and every process under it, with what each holds. In the sandbox's
    PID namespace an orphan goes to the namespace's first process: nothing
    started inside escapes from under bwrap."""
    processes, children = _processes(fresh)
    found, todo = {}, [pid]
    while todo:
        p = todo.pop()
        found[p] = processes.get(p, (0, 0, 0))
        todo += children.get(p, [])
    return found


def _usage(pid):
    """(resident bytes, processes and threads) of pid and everything under it."""
    mine = _below(pid).values()
    return sum(m[1] for m in mine), sum(m[2] for m in mine)


def _tree(folder, most):
    """(bytes on disk, entries) under folder, counting no more than `most` entries."""
    size = count = 0
    todo = [folder]
    while todo and count < most:
        path = todo.pop()
        for _ in (1, 2):
            try:
                with os.scandir(path) as it:
                    for entry in it:
                        count += 1
                        st = entry.stat(follow_symlinks=False)
                        size += st.st_blocks * 512
                        if stat.S_ISDIR(st.st_mode):
                            todo.append(entry.path)
                break
            except PermissionError:   # a folder its owner closed: the grader is
                try:                  # that owner, or root
                    os.chmod(path, 0o700)
                except OSError:
                    break
            except OSError:           # gone meanwhile
                break
    return size, count


def _kill(proc, box):
    """Kills the sandbox: bwrap's process group, and with bwrap (--die-with-parent)
    the first process of the sandbox's PID namespace, whose end ends every
    other one in it. Unsandboxed, also whatever is below it that it can find."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    for pid in list(_below(proc.pid, fresh=True))[1:] if box.unsafe else []:
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def _gone(info):
    """True once the sandbox's PID namespace has no process left: its first
    process ends only after the kernel has ended every other one."""
    pid, ns = info.get("child-pid"), info.get("pid-namespace")
    if not pid:
        return True
    deadline = time.monotonic() + GONE_WAIT_S
    while True:
        try:
            if os.readlink(f"/proc/{pid}/ns/pid") != f"pid:[{ns}]":
                return True
            with open(f"/proc/{pid}/stat", "rb") as f:
                if f.read().rsplit(b")", 1)[1].split()[0] == b"Z":
                    return True
        except (OSError, IndexError):
            return True
        if time.monotonic() > deadline:
            return False
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
        time.sleep(0.05)


def remove(folder):
    """Removes a folder a sandbox wrote in, whatever modes it left on it."""
    def unlock(_, path, __):
        for p in (Path(path).parent, Path(path)):
            try:
                os.chmod(p, 0o700)
            except OSError:
                pass
        if Path(path).is_dir() and not Path(path).is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        else:
            Path(path).unlink(missing_ok=True)
    if Path(folder).exists():
        shutil.rmtree(folder, onerror=unlock)
