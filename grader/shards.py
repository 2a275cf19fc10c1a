"""The record of a grade-all run (run.json), and the checks before the
outputs of several shards are joined into one (grade.py --merge). A shard is
a deterministic slice of a class (submissions.shard); each writes its own
output folder and its run.json, which says which slice it was and which
students it graded. Standard library only.
"""

import hashlib
import json
import socket
import time
from pathlib import Path

RUN_FILE = "run.json"


class ShardError(Exception):
    """Outputs that cannot be joined: the message says which and why."""


def class_digest(names):
    """A short fingerprint of a class's sorted student names: two shards of
    one class carry the same one."""
    return hashlib.sha256("\n".join(names).encode("utf-8")).hexdigest()[:16]


def write_run(out, *, everyone, students, shard, workers, seconds, build_seconds, sandbox):
    """Records a finished run in OUT/run.json, with its throughput and how
    student code was sandboxed; returns it. `workers`: each worker's
    CUDA_VISIBLE_DEVICES entry ("0", or "0,1" for an exercise that needs two;
    None: as given), in the order of their numbers; "gpus" lists the GPUs
    they used, each once. It records no grades, and a run that graded
    nothing (no GPU) writes none."""
    minutes = seconds / 60
    entries = [g if g is not None else "as given" for g in workers]
    record = {
        "shard": {"index": shard[0], "count": shard[1]},
        "class": {"students": everyone, "digest": class_digest(everyone)},
        "students": students,
        "gpus": list(dict.fromkeys(g for entry in entries for g in entry.split(","))),
        "workers": entries,
        "sandbox": sandbox,
        "host": socket.gethostname(),
        "finished": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "seconds": round(seconds, 1),
        "build_seconds": round(build_seconds, 1),
        "submissions": len(students),
        "submissions_per_minute": round(len(students) / minutes, 2) if minutes > 0 else None,
    }
    with open(Path(out) / RUN_FILE, "w", encoding="utf-8") as f:
        json.dump(record, f, indent=1, ensure_ascii=False)
        f.write("\n")
    return record


def throughput(record):
    """The line grade-all ends with: how many submissions a minute this run graded."""
    gpus = [g for g in record["gpus"] if g != "as given"]
    where = (f"{len(gpus)} GPU{'' if len(gpus) == 1 else 's'} ({', '.join(gpus)})" if gpus
             else "1 worker (no GPU listed)")
    rate = record["submissions_per_minute"]
    return (f"grade: {record['submissions']} submissions in {record['seconds'] / 60:.1f} min "
            f"(builds {record['build_seconds'] / 60:.1f} min) on {where} of "
            f"{record['host']}: {rate if rate is not None else 'not measured'} "
            "submissions per minute")


def _read(folder):
    path = Path(folder) / RUN_FILE
    if not Path(folder).is_dir():
        raise ShardError(f"{folder}: no such folder (did that shard run? see its log)")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ShardError(f"{folder}: no {RUN_FILE}, so that grade-all did not finish "
                         "(see its log), or this is not a grade-all output folder") from None
    except (OSError, ValueError) as e:
        raise ShardError(f"{path}: unreadable ({e})") from None


def check(folders):
    """[(folder, record)] of shards that together grade one class, each student
    once; raises ShardError naming what overlaps or is missing."""
    parts = [(Path(f), _read(f)) for f in folders]
    first, record = parts[0]
    count, digest = record["shard"]["count"], record["class"]["digest"]
    seen = {}
    for folder, rec in parts:
        index = rec["shard"]["index"]
        if rec["class"]["digest"] != digest or rec["shard"]["count"] != count:
            raise ShardError(f"{folder} is shard {index}/{rec['shard']['count']} of a class "
                             f"of {len(rec['class']['students'])}, {first} shard "
                             f"{record['shard']['index']}/{count} of a class of "
                             f"{len(record['class']['students'])}: not one grading run's shards")
        if index in seen:
            raise ShardError(f"{seen[index]} and {folder} are both shard {index}/{count}")
        seen[index] = folder
    graded = {}
    for folder, rec in parts:
        for name in rec["students"]:
            if name in graded:
                raise ShardError(f"{name} was graded in both {graded[name]} and {folder}")
            graded[name] = folder
    missing = [n for n in record["class"]["students"] if n not in graded]
    if missing:
        absent = sorted(set(range(1, count + 1)) - seen.keys())
        which = (f"shard{'s' if len(absent) > 1 else ''} "
                 f"{', '.join(f'{i}/{count}' for i in absent)} not given; " if absent else "")
        listed = ", ".join(missing[:5]) + (", ..." if len(missing) > 5 else "")
        raise ShardError(f"{which}{len(missing)} student{'s' if len(missing) > 1 else ''} "
                         f"not graded: {listed}")
    return parts
