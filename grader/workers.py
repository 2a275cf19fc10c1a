"""Grading on every GPU of a machine: one worker per GPU, each grading one
student at a time on its own GPU (through CUDA_VISIBLE_DEVICES), so that no
two measurements ever share a GPU. grade.py calls these. Standard library only.
"""

import concurrent.futures
import os
import queue
import re
import shutil
import subprocess


def visible_gpus():
    """The GPUs this process may use, as CUDA_VISIBLE_DEVICES entries: those
    of CUDA_VISIBLE_DEVICES when it is set (Slurm sets it to a job's GPUs;
    MIG UUIDs work too), else one index per 'GPU N:' line of nvidia-smi -L;
    [] when neither shows a GPU."""
    listed = os.environ.get("CUDA_VISIBLE_DEVICES")
    if listed is not None:
        return [d.strip() for d in listed.split(",") if d.strip()]
    smi = shutil.which("nvidia-smi")
    if not smi:
        return []
    try:
        proc = subprocess.run([smi, "-L"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return []
    if proc.returncode != 0:
        return []
    return re.findall(r"^GPU (\d+):", proc.stdout, re.MULTILINE)


def worker_gpus(wanted=None):
    """One entry per worker: the CUDA_VISIBLE_DEVICES value it runs with, or
    None for "as this process has it" (no GPU seen: one worker, whose
    harnesses say for themselves that they cannot run). wanted: --gpus N.
    Raises ValueError when N is more than the GPUs this machine shows."""
    gpus = visible_gpus()
    if wanted is None:
        return gpus or [None]
    if gpus and wanted > len(gpus):
        raise ValueError(f"--gpus {wanted}: this machine shows {len(gpus)} GPU"
                         f"{'' if len(gpus) == 1 else 's'} ({', '.join(gpus)}), and two "
                         "workers on one GPU would disturb each other's timings")
    # no GPU seen (nvidia-smi missing, or the stand-ins of the tests): N numbered workers
    return gpus[:wanted] if gpus else [str(k) for k in range(wanted)]


def share(gpus, items, start, one):
    """Runs start(worker, gpu) on every worker, then one(worker, gpu, item)
    for each item, each on the first worker free; a worker does one thing at a
    time. Returns when every item is done; re-raises the first error, once
    the other workers have finished the item in hand and taken no other."""
    todo = queue.SimpleQueue()
    for item in items:
        todo.put(item)

    def worker(k, gpu):
        start(k, gpu)
        while True:
            try:
                item = todo.get_nowait()
            except queue.Empty:
                return
            one(k, gpu, item)

    with concurrent.futures.ThreadPoolExecutor(max_workers=len(gpus)) as pool:
        running = [pool.submit(worker, k, gpu) for k, gpu in enumerate(gpus)]
        try:
            for done in running:
                done.result()
        except BaseException:   # an error, or Ctrl-C: the workers finish the student in hand
            while not todo.empty():
                todo.get_nowait()
            raise
