"""What a class folder holds: the students, each one's exercise files, and
what is wrong with a folder that cannot be graded as it is. grade.py calls
these; nothing here builds or runs anything. Standard library only.

A student folder that is broken in any way (two files for one exercise,
files one level down, nothing in it, files that cannot be read) never stops
the class: each problem becomes that student's rows, with a status and a
reason the instructor can act on.
"""

import hashlib
import re
from pathlib import Path

# How deep to follow a course site's zip (student/submission/hw1/ex01_...cu).
MAX_DESCENT = 4
# Folders a zip tool adds beside the real one, never a student's work.
NOT_WORK = ("__MACOSX",)
# What nvcc passes through a shell unquoted (seen with CUDA 13: -I, -o and
# the sources break on these), and what compute-sanitizer expands in a log
# file's name (%p, %q{VAR}).
UNSAFE_IN_PATHS = set("'\"$`\\%")


class FolderError(Exception):
    """A class folder that cannot be graded at all: the message says why."""


# ---- names -----------------------------------------------------------------------

def display_name(name):
    """The name as reports show it: undecodable bytes replaced, control
    characters written as \\xNN, so that no folder name can break a line of the
    table, a CSV row or junit.xml."""
    text = name.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    return re.sub(r"[\x00-\x1f\x7f]", lambda m: f"\\x{ord(m.group()):02x}", text)


def folder_key(name):
    """A folder name for this student's outputs that holds no text nvcc or a
    shell could misread: the name itself when it is plain, else its plain
    letters and a short hash of the whole name (o'brien -> o_brien-1a2b3c4d)."""
    if re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}", name):
        return name
    plain = re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._-")[:40] or "student"
    digest = hashlib.sha256(name.encode("utf-8", "surrogateescape")).hexdigest()[:8]
    return f"{plain}-{digest}"


def unsafe_path(path):
    """The characters of `path` that nvcc or compute-sanitizer would misread, or ''."""
    return "".join(sorted(set(str(path)) & UNSAFE_IN_PATHS))


# ---- the class -------------------------------------------------------------------

def class_folders(root):
    """([(name, folder)], [skipped entries]) of a class folder: one sub-folder
    per student, sorted by name (by code point, so the same on every machine);
    hidden and _-prefixed folders are not students."""
    try:
        entries = sorted(root.iterdir(), key=lambda p: p.name)
    except OSError as e:
        raise FolderError(f"cannot read {root}: {e.strerror}") from None
    found, skipped = [], []
    for entry in entries:
        if entry.name.startswith((".", "_")):
            continue
        if entry.is_dir():
            found.append((entry.name, entry))
        else:
            skipped.append(entry.name)
    return found, skipped


def shard(people, index, count):
    """Shard `index` of `count` (1-based): every count-th student of the sorted
    class, starting at the index-th, so that shards are even and the same
    wherever they run."""
    return [p for k, p in enumerate(people) if k % count == index - 1]


def parse_shard(text):
    """'2/5' -> (2, 5); raises ValueError with the reason."""
    match = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", text or "")
    if not match:
        raise ValueError(f"--shard {text}: give I/N, e.g. 2/5")
    index, count = int(match.group(1)), int(match.group(2))
    if not 1 <= index <= count:
        raise ValueError(f"--shard {text}: I must be from 1 to N")
    return index, count


# ---- one student's files -----------------------------------------------------------

def _listing(folder):
    """(files, sub-folders) of a folder, by name; raises OSError."""
    entries = sorted(folder.iterdir(), key=lambda p: p.name)
    folders = [e for e in entries if e.is_dir() and not e.is_symlink()
               and not e.name.startswith(".") and e.name not in NOT_WORK]
    files = [e for e in entries if e not in folders and not e.name.startswith(".")
             and e.name not in NOT_WORK]
    return files, folders


def work_folder(folder):
    """(the folder that holds the student's files, its files, its sub-folders):
    descends through folders that hold nothing named *.cu and exactly one sub-folder,
    as a course site's zip unpacks (student/submission/ex01_...cu). Raises OSError."""
    files, folders = _listing(folder)
    for _ in range(MAX_DESCENT):
        if any(f.name.endswith(".cu") for f in files + folders) or len(folders) != 1:
            break
        folder = folders[0]
        files, folders = _listing(folder)
    return folder, files, folders


def _readable(path):
    """Why `path` cannot be graded, or '' when it can."""
    try:
        path.name.encode("utf-8")
    except UnicodeEncodeError:   # nvcc and the reports need a name they can write
        return f"{display_name(path.name)}: the file's name is not UTF-8; rename it"
    if path.is_symlink():
        return f"{path.name} is a symbolic link: submit the file itself"
    if not path.is_file():
        return f"{path.name} is not a file"
    try:
        with open(path, "rb") as f:
            f.read(1)
    except OSError as e:
        return f"cannot read {path.name}: {e.strerror}"
    return ""


def _count(n):
    return {2: "two", 3: "three"}.get(n, str(n))


def sources(folder, names):
    """{exercise: (the student's file or None, problem or None)} for one
    student's folder. A problem is {"status", "reason"}: what stops that
    exercise (or every exercise) from being graded, as grades.csv says it."""
    def every(status, reason):
        return {ex: (None, {"status": status, "reason": reason}) for ex in names}
    try:
        home, files, folders = work_folder(folder)
    except OSError as e:
        return every("unreadable", f"cannot read the folder: {e.strerror}")
    where = f" (in {display_name(str(home.relative_to(folder)))}/)" if home != folder else ""
    if not files and not folders:
        return every("empty_folder", f"the folder is empty{where}: nothing was submitted")
    ours = sorted((f for f in files + folders if re.match(r"ex\d\d_.*\.cu$", f.name)),
                  key=lambda f: f.name)
    if not ours:
        held = [f.name for f in files] + [f"{d.name}/" for d in folders]
        listed = ", ".join(held[:6]) + (", ..." if len(held) > 6 else "")
        return every("no_exercise_files", f"no exercise file (exNN_*.cu) in the folder{where}; "
                     f"it holds {display_name(listed)}")
    found = {}
    for ex in names:
        mine = [f for f in ours if f.name.startswith(f"{ex}_")]
        if len(mine) > 1:
            listed = display_name(", ".join(f.name for f in mine))
            found[ex] = (None, {"status": "duplicate_files", "reason":
                                f"{_count(len(mine))} files for {ex}{where}: {listed}; keep one"})
        elif mine and _readable(mine[0]):
            found[ex] = (None, {"status": "unreadable",
                                "reason": display_name(_readable(mine[0]))})
        else:
            found[ex] = (mine[0] if mine else None, None)
    return found
