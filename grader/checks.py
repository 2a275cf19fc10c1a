#!/usr/bin/env python3
"""The two checks a student's file passes before it is linked into its given
program: one place, which make runs (`make exNN`) and grader/runner.py imports.

    checks.py includes [--source NAME] SOURCE -- NVCC FLAGS...
        What SOURCE #includes, by `NVCC FLAGS... -M SOURCE` (host and device
        passes both), must be a file of SOURCE's own folder, or lie in
        exercises/given/, common/, kernels/, or the system's or the CUDA
        toolkit's include folders. Run before the compiler, so that a file
        outside them (../solutions/..., grader/...) is named, never compiled,
        and its text never reaches a message.
    checks.py symbols [--source NAME] OBJECT -- DEFINERS...
        OBJECT, the student's compiled file, may define no external symbol
        that a DEFINER defines (the given program's objects, libstreamlab.a,
        the CUDA runtime, the C library: objects, archives or shared
        libraries), and no main(); and run no code of its own before main()
        (a constructor, a global initialised by a call, an ifunc resolver) or
        after it (a destructor), when the grader's token is within reach.
        Two weak definitions (inline functions of the same header) are fine:
        the linker keeps one.

Each check prints nothing and exits 0 when the file passes, else prints one
line naming the file or symbol and what to do, and exits 1 (3 when it cannot
check). NAME is the student's name for the file, where SOURCE is the
grader's copy of it (whose #line gives NAME). Standard library and binutils
(nm, readelf, c++filt) only: the grader runs it in its sandbox.
"""

import glob
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROJECT_INCLUDES = ("exercises/given", "common", "kernels")
WEAK = set("WVwv")


# ---- includes ---------------------------------------------------------------------------

def _make_deps(text):
    """The prerequisites of a make rule as nvcc -M writes it ("a\\ b" is one name)."""
    text = text.replace("\\\n", " ")
    _, _, deps = text.partition(": ")
    return [d.replace("\\ ", " ") for d in re.findall(r"(?:\\ |[^\s])+", deps)]


def _system_dirs(nvcc):
    """The host compiler's include search list and the CUDA toolkit's include folders."""
    dirs = []
    proc = subprocess.run(["g++", "-xc++", "-E", "-v", "-"], input="", capture_output=True,
                          text=True)
    listing = proc.stderr.partition("#include <...> search starts here:")[2]
    dirs += [line.strip() for line in listing.partition("End of search list.")[0].splitlines()
             if line.strip()]
    found = shutil.which(nvcc)
    if found:
        toolkit = Path(found).resolve().parent.parent
        dirs += [str(toolkit / "include")] + glob.glob(str(toolkit / "targets" / "*" / "include"))
    return [os.path.realpath(d) for d in dirs]


def _inside(path, folder):
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _shown(path):
    """A path as a person reads it: from the project's root when it lies inside."""
    return os.path.relpath(path, ROOT) if _inside(path, str(ROOT)) else path


ALLOWED = ("its own folder, exercises/given/, common/, kernels/, and the system's and "
           "the CUDA toolkit's headers")


def check_includes(source, compile_cmd, cwd=".", name=None):
    """None when everything `source` includes may be, else the reason (naming
    the file `name`, which the compiler's messages may give it too)."""
    cwd = Path(cwd)
    name = name or str(source)
    own = os.path.realpath(cwd / Path(source).parent)
    allowed = [os.path.realpath(ROOT / d) for d in PROJECT_INCLUDES] + _system_dirs(compile_cmd[0])

    def ok(path):
        # The grader's copy names itself by #line, which nvcc -M lists as a
        # file: name, or, with a quote in it, a mangled name that is no file.
        if path == name or (name != str(source) and "/" not in path
                            and not (cwd / path).exists()):
            return True
        real = os.path.realpath(cwd / path)
        return os.path.dirname(real) == own or any(_inside(real, d) for d in allowed)

    proc = subprocess.run([*compile_cmd, "-M", str(source)], cwd=cwd, capture_output=True,
                          text=True, errors="replace")
    if proc.returncode != 0:
        # Name the first file the preprocessor stopped in; quote its message
        # only when that file is one the student may read anyway.
        for line in proc.stderr.splitlines():
            where = re.match(r"(.+?)(?::\d+(?::\d+)?|\(\d+\)): (?:fatal |catastrophic )?error",
                             line)
            if where:
                if ok(where.group(1)):
                    return line.replace(f"{own}/", "").strip()[:300]
                return (f"{name} includes {_shown(os.path.realpath(cwd / where.group(1)))}, "
                        f"outside {ALLOWED}: include only those")
        return f"{name}: the preprocessor failed on what it includes (nvcc -M)"
    for dep in _make_deps(proc.stdout):
        if not ok(dep):
            return (f"{name} includes {_shown(os.path.realpath(cwd / dep))}, outside "
                    f"{ALLOWED}: include only those")
    return None


# ---- symbols -----------------------------------------------------------------------------

def _nm(path, *flags):
    proc = subprocess.run(["nm", "-P", *flags, str(path)], capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"nm {path}: {proc.stderr.strip()}")
    return proc.stdout.splitlines()


def _source_of(member):
    """The project file an object of ours was built from (stats.o: common/stats.c)."""
    stem = Path(member).stem
    for folder in ("common", "kernels", "exercises/given"):
        for ext in (".c", ".cu"):
            if (ROOT / folder / f"{stem}{ext}").exists():
                return f"{folder}/{stem}{ext}"
    return None


def _definitions(path):
    """{symbol: (type, where)} for what an object, archive or shared library defines."""
    path = str(path)
    shared = re.search(r"\.so(\.\d+)*$", path)
    lines = _nm(path, "-D", "--defined-only") if shared else _nm(path, "-A", "-g",
                                                                 "--defined-only")
    found = {}
    for line in lines:
        if shared:
            fields, member = line.split(), None
        else:   # "lib.a[stats.o]: stats_of T 0 10" or "given.o: main T 0 10"
            head, _, rest = line.rpartition(": ")
            fields, member = rest.split(), re.search(r"\[(.+)\]$", head)
        if len(fields) < 2:
            continue
        symbol = fields[0].split("@")[0]
        where = _source_of(member.group(1) if member else path) if not shared else None
        where = where or os.path.basename(path)
        found.setdefault(symbol, (fields[1], where))
    return found


def _demangle(symbols):
    tool = shutil.which("c++filt")
    if not tool:
        return list(symbols)
    return subprocess.run([tool], input="\n".join(symbols), capture_output=True,
                          text=True).stdout.splitlines()


def _readelf(obj, flag):
    return subprocess.run(["readelf", flag, "-W", str(obj)], capture_output=True,
                          text=True).stdout


def _code_outside_main(obj):
    """What in obj runs before or after main(), as a phrase, or None. nvcc puts
    one constructor in every object, __sti____cudaRegisterAll, which registers
    its kernels with the runtime: that one is expected."""
    sections = dict(re.findall(r"\[\s*(\d+)\]\s+(\S+)", _readelf(obj, "-S")))
    names = set(sections.values())
    if any(re.match(r"\.(fini_array|dtors)", n) for n in names):
        return "a destructor, which runs after main()"
    if any(re.match(r"\.(preinit_array|ctors|init_array\.)", n) for n in names):
        return "a constructor with a priority, which runs before main()"
    functions = {}   # (section, offset) and name: the function's name
    for value, kind, ndx, name in re.findall(
            r"^\s*\d+:\s+([0-9a-f]+)\s+\d+\s+(\w+)\s+\w+\s+\w+\s+(\w+)\s+(\S+)",
            _readelf(obj, "-s"), re.M):
        if kind == "IFUNC":
            return f"an ifunc resolver ({name}), which runs before main()"
        if kind == "FUNC" and ndx.isdigit():
            functions[(sections.get(ndx), int(value, 16))] = name
            functions[(name, 0)] = name
    block = re.search(r"'\.rela\.init_array'.*?(?:\n\n|$)", _readelf(obj, "-r"), re.S)
    for target in re.findall(r"R_X86_64_64\s+\S+\s+(.+)", block.group(0) if block else ""):
        place, _, offset = target.strip().partition(" + ")
        function = functions.get((place, int(offset or "0", 16)), "")
        if "__sti____cudaRegisterAll" not in function:
            return ("code that runs before main() (a constructor, or a global initialised by "
                    "a function call; #include <iostream> makes one)")
    return None


def check_symbols(obj, definers, source=None):
    """None when the object may be linked with the definers, else the reason."""
    name = source or Path(obj).name
    outside = _code_outside_main(obj)
    if outside:
        return f"{name} has {outside}: remove it (the given program starts and ends the run)"
    mine = {s: t for s, (t, _) in _definitions(obj).items()}
    if "main" in mine:
        return f"{name} defines main(): the given program (exercises/given/) has the main; remove yours"
    clashes = []
    for path in definers:
        for symbol, (kind, where) in _definitions(path).items():
            if symbol in mine and not (kind in WEAK and mine[symbol] in WEAK):
                clashes.append((symbol, where))
    if not clashes:
        return None
    clashes.sort()
    symbol, where = clashes[0]
    more = f" (and {len(clashes) - 1} more)" if len(clashes) > 1 else ""
    return (f"{name} defines {_demangle([symbol])[0]}, which {where} defines{more}: make it "
            "static or rename it")


def main(argv):
    usage = ("usage: checks.py includes [--source NAME] SOURCE -- NVCC FLAGS...\n"
             "       checks.py symbols [--source NAME] OBJECT -- DEFINERS...")
    if len(argv) < 2 or argv[0] not in ("includes", "symbols") or "--" not in argv:
        print(usage, file=sys.stderr)
        return 2
    split = argv.index("--")
    args, rest = argv[1:split], argv[split + 1:]
    if len(args) not in (1, 3) or (len(args) == 3 and args[0] != "--source") or not rest:
        print(usage, file=sys.stderr)
        return 2
    name = args[1] if len(args) == 3 else None
    try:
        if argv[0] == "includes":
            reason = check_includes(args[-1], rest, name=name)
        else:
            reason = check_symbols(args[-1], rest, name)
    except (OSError, RuntimeError) as e:   # nm, readelf or the compiler could not run
        print(f"checks.py: cannot check {name or args[-1]}: {e}", file=sys.stderr)
        return 3
    if reason:
        print(reason, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
