#!/usr/bin/env bats
# The grader's sandbox (grader/sandbox.py), without a GPU: a stand-in harness
# (tests/fixtures/grading/escape.sh) tries what a submission written to attack
# the grader would, and each attempt fails; where no sandbox can be made the
# grader refuses, or, told --unsafe, says so in every report; without a GPU
# it only builds, and writes no grade.

load test_helper

ESCAPE=tests/fixtures/grading/escape.sh
METRICS_EX01='"launches_wrong": 0, "speedup_vs_blocking": 1.95, "level2_launches_wrong": 0, "level2_speedup_vs_per_thread": 1.95'
NO_GPU='echo "gpu_probe: cannot run here: no CUDA-capable GPU is visible" >&2; exit 3'
grade() { python3 "$ROOT/grader/grade.py" "$@"; }

setup() {
    CLASS="$BATS_TEST_TMPDIR/class"
    OUT="$BATS_TEST_TMPDIR/out"
    mkdir -p "$CLASS/ann" "$CLASS/bob" "$OUT"
    cp exercises/ex01_default_stream.cu "$CLASS/ann/"
    echo "bob's own work" >"$CLASS/bob/ex01_default_stream.cu"
    echo "an earlier run's grades" >"$OUT/grades.csv"
}

# attempt [GRADE-OPTIONS...] -- ESCAPE-ARGS...: grades ann's ex01 with
# escape.sh as its harness; what the stand-in said is in $OUT/work/ex01/measure.stdout.
attempt() {
    local options=()
    while [ "$1" != -- ]; do options+=("$1"); shift; done
    shift
    grade --submission "$CLASS/ann" --only ex01 --no-reference --no-memcheck --out "$OUT" \
        "${options[@]}" --fake-harness "$ESCAPE $*"
}
said() { cat "$OUT/work/ex01/measure.stdout"; }

# row: ann's ex01 row of grades.csv as points/max,status,reason.
row() {
    python3 - "$OUT/grades.csv" <<'PY'
import csv, sys
for r in csv.DictReader(open(sys.argv[1], encoding="utf-8")):
    print(f"{r['points']}/{r['max_points']},{r['status']},{r['reason']}")
PY
}

# the real python3, for runs whose PATH has no bwrap (and no pyenv shims)
python_binary() { python3 -c 'import sys; print(sys.executable)'; }

@test "a submission sees the project's headers, and nothing of the solutions, rubrics, grader, build, tests, .git, other students or reports" {
    require_sandbox
    hidden=("$ROOT/solutions/ex01_default_stream.cu" "$ROOT/solutions" "$ROOT/grader/rubrics/ex01.ini"
        "$ROOT/grader/grade.py" "$ROOT/build" "$ROOT/.git" "$ROOT/tests/cpu_grade.bats" "$ROOT/Makefile"
        "$CLASS/bob/ex01_default_stream.cu" "$CLASS/ann/ex01_default_stream.cu" "$CLASS"
        "$OUT/grades.csv" "$OUT" /home /root /var /etc/shadow)
    run attempt -- read common/streamlab.h kernels /usr/bin/sh "${hidden[@]}"
    assert_success
    run said
    assert_line "read common/streamlab.h: yes"
    assert_line "read kernels: yes"
    assert_line "read /usr/bin/sh: yes"
    for p in "${hidden[@]}"; do
        assert_line "read $p: no"
    done
}

@test "a submission writes only in its own scratch folder and /tmp, and neither outlives its run" {
    require_sandbox
    run attempt -- write / /usr /dev "$ROOT" "$ROOT/common" "$ROOT/exercises" "$OUT" "$CLASS/ann" \
        /tmp '$HOME'
    assert_success
    run said
    for p in / /usr /dev; do
        assert_line "write $p: no"
    done
    for p in "$ROOT" "$ROOT/common" "$ROOT/exercises" "$OUT" "$CLASS/ann"; do
        assert_line "write $p: no"
        [ ! -e "$p/escape-test" ] || fail "$p/escape-test was written"
    done
    assert_line "write /tmp: yes"
    assert_line --regexp "^write /.*/scratch/ex01-measure-[^/]+: yes$"
    scratch=$(sed -n 's/^write \(.*\/scratch\/ex01-measure-[^/]*\): yes$/\1/p' "$OUT/work/ex01/measure.stdout")
    [ ! -e "$scratch" ] || fail "the scratch folder $scratch is still there"
}

@test "a submission reaches no network, not even a server on the grader's own loopback" {
    require_sandbox
    python3 -c 'import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen()
print(s.getsockname()[1], flush=True)
while True:
    s.accept()[0].close()' >"$BATS_TEST_TMPDIR/port" &
    listener=$!
    for _ in $(seq 50); do [ -s "$BATS_TEST_TMPDIR/port" ] && break; sleep 0.1; done
    port=$(cat "$BATS_TEST_TMPDIR/port")
    # the server answers from here, outside the sandbox
    python3 -c "import socket; socket.create_connection(('127.0.0.1', $port), timeout=3)" ||
        { kill "$listener"; fail "the test's own server did not answer"; }
    run attempt -- connect "127.0.0.1:$port"
    kill "$listener"
    assert_success
    run said
    assert_line "connect 127.0.0.1:$port: no"
    run attempt -- connect 1.1.1.1:53
    run said
    assert_line "connect 1.1.1.1:53: no"
}

@test "nothing a submission leaves running outlives its run, nor holds the grader past it" {
    require_sandbox
    marker="$$$RANDOM"
    start=$(date +%s)
    run attempt -- linger "$marker"
    assert_success
    (($(date +%s) - start < 10)) || fail "the grader waited for what the submission left running"
    run said
    assert_line "left sleep 1000.$marker running"
    run row
    assert_output "16/16,passed,full marks [memcheck off]"
    run pgrep -f "sleep 1000.$marker"
    assert_failure
}

@test "control characters and invalid UTF-8 a submission prints reach the reports as one printable line, and junit.xml stays valid" {
    require_sandbox
    weird="$CLASS/$(printf 'ann\033[31m\001\nx')"
    mkdir "$weird"
    cp exercises/ex01_default_stream.cu "$weird/"
    run grade --submission "$weird" --only ex01 --no-reference --no-memcheck --out "$OUT" \
        --format gradescope --fake-harness "$ESCAPE controls"
    assert_success
    run python3 tests/fixtures/grading/check_outputs.py junit "$OUT/junit.xml"
    assert_success
    run python3 tests/fixtures/grading/check_outputs.py gradescope "$OUT/results.json"
    assert_success
    run python3 - "$OUT" <<'PY'
import csv, json, sys, unicodedata
out = sys.argv[1]
def bad(text):
    return [hex(ord(c)) for c in text if unicodedata.category(c) == "Cc" and c != "\n"
            or c in "\u202e\ufffe"]
for name in ("report.txt", "grades.csv", "junit.xml", "results.json"):
    text = open(f"{out}/{name}", encoding="utf-8").read()   # valid UTF-8, or this fails
    assert not bad(text), f"{name}: {bad(text)}"
rows = list(csv.DictReader(open(f"{out}/grades.csv", encoding="utf-8")))
assert len(rows) == 1, rows
def strings(x):
    if isinstance(x, str): yield x
    elif isinstance(x, dict): yield from (s for v in x.values() for s in strings(v))
    elif isinstance(x, list): yield from (s for v in x for s in strings(v))
for s in strings(json.load(open(f"{out}/results.json"))):
    assert not bad(s.replace("\n", " ")), s
print(rows[0]["student"])
print(rows[0]["status"], rows[0]["reason"])
PY
    assert_success
    # the name as the class's reports write it (submissions.display_name)
    assert_line --index 0 'ann\x1b[31m\x01\x0ax'
    assert_line --index 1 --regexp '^error stopped with exit 1: .* [^ ]+\[31mred[^ ]+\[0m [^ ]+reversed .+ end$'
}

@test "a fork bomb is stopped at the sandbox's process limit, and none of its processes survive" {
    require_sandbox
    marker="$$$RANDOM"
    run attempt -- fork 5000 "$marker"
    assert_success
    run row
    assert_output "0/16,over_limit,stopped: it started more than 256 processes and threads (the sandbox's limit)"
    run said
    refute_output --partial "forked 5000"
    run pgrep -f "sleep 30.$marker"
    assert_failure
}

@test "a submission that holds too much memory is stopped at the sandbox's memory limit" {
    require_sandbox
    run attempt --memory-limit 0.25 -- memory 2048
    assert_success
    run row
    assert_output "0/16,over_limit,stopped: it used more than 256 MiB of memory (the sandbox's limit)"
    run said
    refute_output "hold 2048 MiB: yes"
}

@test "what a submission writes is bounded: each file in size, all of them in number" {
    require_sandbox
    run attempt -- disk 300
    assert_success
    run said
    assert_line "write 300 MiB: no"
    run attempt -- files 20000
    run row
    assert_output "0/16,over_limit,stopped: it wrote more than 1 GiB or 10000 files in its scratch folder and /tmp (the sandbox's limit)"
}

@test "a submission sees only the environment the sandbox gives it" {
    require_sandbox
    SECRET_TOKEN=from-the-grader run attempt -- env
    assert_success
    run python3 - "$OUT/work/ex01/measure.stdout" <<'PY'
import sys
names = {line.split("=", 1)[0] for line in open(sys.argv[1]) if "=" in line and line[0].isupper()}
allowed = {"PATH", "HOME", "TMPDIR", "LANG", "PWD", "GRADER_PASS",
           "GRADER_EXERCISE", "CUDA_VISIBLE_DEVICES", "LD_LIBRARY_PATH"}
print(" ".join(sorted(names - allowed)) or "nothing else")
PY
    assert_output "nothing else"
}

@test "where no sandbox can be made, grading stops with one line naming what to install" {
    run --separate-stderr env PATH=/nonexistent "$(python_binary)" grader/grade.py --submission "$CLASS/ann" \
        --only ex01 --no-reference --out "$OUT" --fake-harness "$ESCAPE env"
    assert_failure 3
    assert_equal "$stderr" "grade: no sandbox for the student's code here: no bwrap on PATH: install bubblewrap (apt-get install bubblewrap) (or grade without one: --unsafe, UNSAFE=1)"
    run cat "$OUT/grades.csv"
    assert_output "an earlier run's grades"
    run make -s -n grade UNSAFE=1
    assert_output --partial "--unsafe"
}

@test "graded with --unsafe where no sandbox can be made, every report says it was graded without one" {
    run env PATH=/nonexistent "$(python_binary)" grader/grade.py --submission "$CLASS/ann" --only ex01 \
        --no-reference --no-memcheck --out "$OUT" --unsafe --format gradescope \
        --fake-harness "tests/fixtures/grading/fake-harness.sh '$METRICS_EX01'"
    assert_success
    assert_output --partial "sandbox: none (--unsafe"
    assert_output --partial "note: graded without a sandbox"
    run row
    assert_output --regexp "^16/16,passed,full marks \[memcheck off\]; graded without a sandbox: none \(--unsafe"
    run python3 - "$OUT" <<'PY'
import json, sys
import xml.etree.ElementTree as ET
out = sys.argv[1]
notes = [p.get("value") for p in ET.parse(f"{out}/junit.xml").getroot().iter("property")
         if p.get("name") == "note"]
print(notes[0].split(":")[0], "|", json.load(open(f"{out}/results.json"))["output"].split(":")[0])
PY
    assert_output "graded without a sandbox | graded without a sandbox"
    # the gradebook's import has no room to say so: not written
    [ ! -e "$OUT/grades-import.csv" ] || fail "grades-import.csv was written for an unsafe run"
    run grade --rescore "$OUT" --out "$BATS_TEST_TMPDIR/again"
    assert_output --partial "note: graded without a sandbox"
    # a class's shard: run.json records it, and the merge says so too
    env PATH=/nonexistent "$(python_binary)" grader/grade.py --submissions "$CLASS" --shard 1/1 \
        --only ex01 --no-reference --no-memcheck --out "$BATS_TEST_TMPDIR/shard" --unsafe \
        --fake-harness "tests/fixtures/grading/fake-harness.sh '$METRICS_EX01'" >/dev/null 2>&1
    run from_json "$BATS_TEST_TMPDIR/shard/run.json" "d['sandbox']"
    assert_output --regexp "^none \(--unsafe"
    run grade --merge "$BATS_TEST_TMPDIR/shard" --out "$BATS_TEST_TMPDIR/merged"
    assert_success
    assert_output --partial "note: graded without a sandbox"
    [ ! -e "$BATS_TEST_TMPDIR/merged/grades-import.csv" ] || fail "the merge wrote grades-import.csv"
}

@test "without a GPU, the grader builds each file in the sandbox, says whether it builds, writes no grade and exits 3" {
    require_sandbox
    rm "$OUT/grades.csv"
    run --separate-stderr grade --submission "$CLASS/ann" --no-reference --out "$OUT" \
        --fake-harness "$ESCAPE env" --fake-gpu-probe "$NO_GPU"
    assert_failure 3
    assert_equal "$output" "ex01: builds: yes
ex02: builds: no (no ex02_*.cu in the submission)
ex03: builds: no (no ex03_*.cu in the submission)
ex04: builds: no (no ex04_*.cu in the submission)
ex05: builds: no (no ex05_*.cu in the submission)
ex06: builds: no (no ex06_*.cu in the submission)
ex07: builds: no (no ex07_*.cu in the submission)
ex08: builds: no (no ex08_*.cu in the submission)
ex09: builds: no (no ex09_*.cu in the submission)
ex10: builds: no (no ex10_*.cu in the submission)
ex11: builds: no (no ex11_*.cu in the submission)
ex12: builds: no (no ex12_*.cu in the submission)
ex13: builds: no (no ex13_*.cu in the submission)
ex14: builds: no (no ex14_*.cu in the submission)"
    assert_equal "${stderr##*$'\n'}" "grade: no GPU is usable here (no CUDA-capable GPU is visible): nothing graded, no grade files written"
    run find "$OUT" -name report.txt -o -name grades.csv -o -name junit.xml -o -name 'results.json' -o -name outcomes
    assert_output ""
    run --separate-stderr grade --submissions "$CLASS" --only ex01 --no-reference --out "$OUT" \
        --fake-harness "$ESCAPE env" --fake-gpu-probe "$NO_GPU"
    assert_failure 3
    assert_equal "$output" "ann ex01: builds: yes
bob ex01: builds: yes"
    # nor run.json: it records no grades, but a merge would take it for a shard that ran
    run find "$OUT" -name run.json -o -name grades-import.csv -o -name grades.csv -o -name outcomes
    assert_output ""
}

@test "a worker's sandbox holds its own GPUs' device nodes and no other's, named by their UUIDs inside" {
    require_sandbox
    run python3 -u - "$BATS_TEST_TMPDIR" <<'PY'
import pathlib, sys
sys.path.insert(0, "grader")
import runner, sandbox, workers
tmp = pathlib.Path(sys.argv[1])
# the driver's /proc/driver/nvidia/gpus of a machine with three GPUs
workers.DRIVER_GPUS = tmp / "gpus"
for minor, address, uuid in ((0, "0000:19:00.0", "GPU-aaaa"), (1, "0000:3b:00.0", "GPU-bbbb"),
                             (2, "0000:5e:00.0", "GPU-cccc")):
    (workers.DRIVER_GPUS / address).mkdir(parents=True)
    (workers.DRIVER_GPUS / address / "information").write_text(
        f"Model: \t\t NVIDIA H100\nGPU UUID: \t {uuid}\nBus Location: \t {address}\n"
        f"Device Minor: \t {minor}\n")
print(workers.device_node("NVIDIA H100\n0000:3b:00.0\n"), workers.device_node("NVIDIA H100\n"))
# and its device nodes, here
(tmp / "dev").mkdir()
for node in ("nvidia0", "nvidia1", "nvidia2", "nvidiactl", "nvidia-uvm"):
    (tmp / "dev" / node).touch()
sandbox.GPU_NODES = tuple(f"{tmp}/dev/{p}" for p in ("nvidia[0-9]*", "nvidiactl", "nvidia-uvm"))
found = workers.device_node
workers.device_node = lambda said: found(said) and (f"{tmp}{found(said)[0]}", found(said)[1])
def seen(box):
    argv = box.argv(["true"], tmp / "scratch")
    nodes = [pathlib.Path(argv[i + 1]).name for i, a in enumerate(argv) if a == "--dev-bind"]
    print(" ".join(nodes), box.environment(tmp / "scratch").get("CUDA_VISIBLE_DEVICES"))
box = sandbox.Sandbox()
seen(box.on_gpu("1"))
seen(box.on_gpu("GPU-bbbb", [f"{tmp}/dev/nvidia1"]))
# the probe in the worker's sandbox gives the PCI address of its GPU
config = {"tools": None, "scratch": tmp, "sandbox": box}
address = "echo 'NVIDIA H100'; echo 0000:3b:00.0"
for probe in (address, "echo 'a stand-in'",
              # a driver that needs every node: the probe fails with one alone
              f'[ "$CUDA_VISIBLE_DEVICES" = 1 ] || {{ echo "gpu_probe: cannot run here: '
              f'no CUDA-capable GPU is visible" >&2; exit 3; }}; {address}'):
    seen(runner.worker_sandbox(dict(config, fake_probe=probe), "1"))
# a worker of two GPUs (ex13): each GPU found by the probe given it alone
# (the address of the first GPU it sees); both nodes bound, the third's not
first = """case ${CUDA_VISIBLE_DEVICES%%,*} in 0|GPU-aaaa) a=19;; 1|GPU-bbbb) a=3b;; 2|GPU-cccc) a=5e;; esac
echo 'NVIDIA H100'; echo 0000:$a:00.0"""
two = runner.worker_sandbox(dict(config, fake_probe=first), "0,2")
seen(two)
print(two.node == f"{tmp}/dev/nvidia0,{tmp}/dev/nvidia2")
PY
    assert_success
    assert_equal "$output" "('/dev/nvidia1', 'GPU-bbbb') None
nvidia-uvm nvidia0 nvidia1 nvidia2 nvidiactl 1
nvidia-uvm nvidia1 nvidiactl GPU-bbbb
nvidia-uvm nvidia1 nvidiactl GPU-bbbb
nvidia-uvm nvidia0 nvidia1 nvidia2 nvidiactl 1
grade: [gpu 1] with only $BATS_TEST_TMPDIR/dev/nvidia1 of the GPUs' device nodes in the sandbox, the GPU probe failed (no CUDA-capable GPU is visible): this worker's sandbox holds every GPU's node
nvidia-uvm nvidia0 nvidia1 nvidia2 nvidiactl 1
nvidia-uvm nvidia0 nvidia2 nvidiactl GPU-aaaa,GPU-cccc
True"
}
