"""Grading on every GPU of a machine: one worker per GPU, each grading one
student at a time on its own GPU (through CUDA_VISIBLE_DEVICES), so that no
two measurements ever share a GPU; an exercise that needs N GPUs in one
process (a rubric's gpus = N) is graded after the others, on workers of N
GPUs each (groups). grade.py calls these. Standard library only.
"""

import concurrent.futures
import os
import queue
import re
import shutil
import subprocess
from pathlib import Path

# What the NVIDIA driver says of each GPU: a folder per PCI address, whose
# "information" names its device node's minor number and its UUID.
DRIVER_GPUS = Path("/proc/driver/nvidia/gpus")
PCI = re.compile(r"\b([0-9a-fA-F]{4,8}):([0-9a-fA-F]{2}):([0-9a-fA-F]{2})\.([0-7])\b")


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


def gpu_count(gpu):
    """How many GPUs a worker's entry holds ("0" one, "0,1" two; None: as
    this process has them), or None when nothing says."""
    if gpu is None:
        return len(visible_gpus()) or None
    return len([d for d in gpu.split(",") if d.strip()])


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


def groups(gpus, size):
    """Workers of `size` GPUs each from the GPUs `gpus` (CUDA_VISIBLE_DEVICES
    entries), in order and never sharing one: floor(len(gpus) / size) entries
    such as "0,1"; [] when there are fewer than `size`."""
    return [",".join(gpus[i:i + size]) for i in range(0, len(gpus) - size + 1, size)]


def share(gpus, items, start, one, first=0):
    """Runs start(worker, gpu) on every worker, then one(worker, gpu, item)
    for each item, each on the first worker free; a worker does one thing at a
    time. The workers are numbered from `first`, gpus[0]'s. Returns when every
    item is done; re-raises the first error, once the other workers have
    finished the item in hand and taken no other."""
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
        running = [pool.submit(worker, k, gpu) for k, gpu in enumerate(gpus, first)]
        try:
            for done in running:
                done.result()
        except BaseException:   # an error, or Ctrl-C: the workers finish the student in hand
            while not todo.empty():
                todo.get_nowait()
            raise


def _pci(text):
    """(domain, bus, device, function) of the first PCI address in text, or None."""
    found = PCI.search(text or "")
    return tuple(int(part, 16) for part in found.groups()) if found else None


def device_node(probed):
    """(/dev/nvidiaN, its GPU's UUID) of the GPU at the PCI address the GPU
    probe printed, from the driver's /proc/driver/nvidia/gpus; None when
    either does not say (a stand-in probe, no NVIDIA driver here)."""
    address = _pci(probed)
    if address is None or not DRIVER_GPUS.is_dir():
        return None
    for folder in sorted(DRIVER_GPUS.iterdir()):
        if _pci(folder.name) != address:
            continue
        try:
            text = (folder / "information").read_text(encoding="utf-8", errors="replace")
        except OSError:
            return None
        minor = re.search(r"^Device Minor:\s*(\d+)\s*$", text, re.MULTILINE)
        uuid = re.search(r"^GPU UUID:\s*(\S+)\s*$", text, re.MULTILINE)
        if minor and uuid:
            return f"/dev/nvidia{minor.group(1)}", uuid.group(1)
        return None
    return None
