"""The grader's outputs: a table for people, a CSV for the gradebook (and
one of totals to import), JUnit XML for an LMS or CI, and Gradescope's
results.json. Each takes the graded students: dicts with "student",
"seconds" and "exercises", a list of what rubric.score() returned. Every
text goes through printable() on its way out, whatever it came from.
Standard library only.
"""

import csv
import re
import socket
import time
import unicodedata
import xml.etree.ElementTree as ET

from rubric import SCORED, fmt

# Importers rely on the first six columns and their order; the second level's
# points come after them, empty for an exercise without one.
CSV_FIELDS = ["student", "exercise", "points", "max_points", "status", "reason",
              "level2_points", "level2_max"]
IMPORT_FIELDS = ["student", "total", "max"]
TEXT_LIMIT = 300      # characters of a message from a student's code or its build
# Characters that change how a text reads rather than what it says: the
# controls (terminal escapes, NUL, C1), the bidirectional overrides and
# isolates ("Trojan Source"), and what XML 1.0 cannot hold at all.
_BIDI = set("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def printable(text, limit=TEXT_LIMIT):
    """text as it may reach a report: one line, whitespace as spaces, each
    control, bidi override, surrogate or XML non-character as U+FFFD, cut to
    `limit` characters. For compiler messages, a program's last words,
    memcheck lines and file names: what a student's code can make."""
    out = []
    for ch in str(text):
        if ch.isspace():
            ch = " "
        elif (unicodedata.category(ch) in ("Cc", "Cs") or ch in _BIDI
              or ch in "\ufffe\uffff"):
            ch = "\ufffd"
        out.append(ch)
    line = re.sub(r" {2,}", " ", "".join(out)).strip()
    return line if len(line) <= limit else line[:limit - 3] + "..."


def cleaned(students):
    """A copy of the graded students with every text printable(): the one
    gate between what was recorded and what is written."""
    def clean(value, key=None):
        if isinstance(value, str):
            return printable(value, TEXT_LIMIT if key in ("student", "title") else 4 * TEXT_LIMIT)
        if isinstance(value, dict):
            return {k: clean(v, k) for k, v in value.items()}
        if isinstance(value, list):
            return [clean(v) for v in value]
        return value
    return [clean(s) for s in students]


def totals(student):
    return (sum(e["points"] for e in student["exercises"]),
            sum(e["max_points"] for e in student["exercises"]))


def by_level(exercise):
    """(level, its criteria) in level order: one (None, all of them) for an
    exercise without a second level, whose reports then read as before."""
    if "levels" not in exercise:
        return [(None, exercise["criteria"])]
    return [(level, [c for c in exercise["criteria"] if c["level"] == level["level"]])
            for level in exercise["levels"]]


def table(students, heading):
    """The readable report: per student, each exercise (with the worker and
    GPUs that graded it, where recorded), each of its levels (when it has
    two) and each criterion."""
    lines = [printable(heading, 4 * TEXT_LIMIT), ""]
    for s in cleaned(students):
        points, total = totals(s)
        lines.append(f"{s['student']}: {fmt(points)}/{fmt(total)} points")
        for e in s["exercises"]:
            score = f"{fmt(e['points'])}/{fmt(e['max_points'])}"
            on = f"  [{e['graded_on']}]" if e.get("graded_on") else ""   # which worker, GPUs
            lines.append(f"  {e['exercise']}  {e['title'][:50]:<50}  {score:>6}  {e['status']}{on}")
            for level, criteria in by_level(e):
                if level:
                    score = f"{fmt(level['points'])}/{fmt(level['max_points'])}"
                    lines.append(f"      level {level['level']}  {score:>6}  {level['status']}")
                if e["status"] not in SCORED:
                    continue
                for c in criteria:
                    mark = "[ok]  " if c["passed"] else "[FAIL]"
                    score = f"{fmt(c['points'])}/{fmt(c['max_points'])}"
                    lines.append(f"        {mark} {score:>5}  {c['name']}: {c['reason']}")
            if e["status"] not in SCORED:
                lines.append(f"        {e['reason']}")
            if e.get("warning"):
                lines.append(f"        {e['warning']}")
        lines.append("")
    return "\n".join(lines)


def test_name(exercise, criterion):
    """A criterion as junit.xml and results.json name it: 'ex04 name: what', and
    'ex04 level 2: name: what' where its exercise has a second level."""
    level = f"level {criterion['level']}: " if "levels" in exercise else ""
    return f"{exercise['exercise']} {level}{criterion['name']}: {criterion['what']}"


def levels_in_words(exercise):
    """' (level 1 10/10 passed, level 2 0/6 failed)', or '' without levels."""
    if "levels" not in exercise:
        return ""
    return " (" + ", ".join(f"level {x['level']} {fmt(x['points'])}/{fmt(x['max_points'])} "
                            f"{x['status']}" for x in exercise["levels"]) + ")"


def write_csv(path, students, note=""):
    """One row per student and exercise: student,exercise,points,max_points,status,reason,
    level2_points,level2_max (points and max_points are both levels' totals).
    A note (how the run was made) closes every reason."""
    with open(path, "w", newline="", encoding="utf-8") as f:
        out = csv.writer(f, lineterminator="\n")
        out.writerow(CSV_FIELDS)
        for s in cleaned(students):
            for e in s["exercises"]:
                second = next((x for x in e.get("levels", []) if x["level"] == 2), None)
                out.writerow([s["student"], e["exercise"], fmt(e["points"]),
                              fmt(e["max_points"]), e["status"],
                              f"{e['reason']}; {note}" if note else e["reason"],
                              fmt(second["points"]) if second else "",
                              fmt(second["max_points"]) if second else ""])


def write_import_csv(path, students):
    """One row per student, student,total,max: the total a gradebook imports
    (exercises/README.md, "Gradescope, and gradebooks", says how for Canvas and Moodle)."""
    with open(path, "w", newline="", encoding="utf-8") as f:
        out = csv.writer(f, lineterminator="\n")
        out.writerow(IMPORT_FIELDS)
        for s in cleaned(students):
            out.writerow([s["student"], *map(fmt, totals(s))])


def write_junit(path, students, note=""):
    """JUnit XML in the shape of Bats' junit formatter: <testsuites>, one
    <testsuite> per student, one <testcase> per criterion, a <failure> for
    each criterion short of its points. A note becomes a property of each
    testsuite. Valid XML whatever the texts held (cleaned())."""
    students = cleaned(students)
    seconds = sum(s.get("seconds", 0) for s in students)
    suites = ET.Element("testsuites", time=f"{seconds:.3f}")
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime())
    for s in students:
        cases = [(e, c) for e in s["exercises"] for c in e["criteria"]]
        failures = sum(1 for _, c in cases if c["points"] < c["max_points"] or not c["passed"])
        suite = ET.SubElement(suites, "testsuite", name=s["student"], tests=str(len(cases)),
                              failures=str(failures), errors="0", skipped="0",
                              time=f"{s.get('seconds', 0):.3f}", timestamp=stamp,
                              hostname=socket.gethostname())
        if note:
            ET.SubElement(ET.SubElement(suite, "properties"), "property", name="note",
                          value=printable(note))
        for e, c in cases:
            case = ET.SubElement(suite, "testcase", classname=f"{s['student']}.{e['exercise']}",
                                 name=test_name(e, c), time="0")
            if c["points"] < c["max_points"] or not c["passed"]:
                failure = ET.SubElement(case, "failure", type="failure")
                failure.text = (f"{fmt(c['points'])}/{fmt(c['max_points'])} points: "
                                f"{c['reason']}")
    ET.indent(suites, space="    ")
    with open(path, "w", encoding="utf-8") as f:
        f.write('<?xml version="1.0" encoding="UTF-8"?>\n')
        f.write(ET.tostring(suites, encoding="unicode"))
        f.write("\n")


def gradescope(student, note=""):
    """Gradescope's autograder results (results.json): a test per criterion.
    A note opens the output the student reads."""
    student = cleaned([student])[0]
    points, total = totals(student)
    tests = []
    for e in student["exercises"]:
        for c in e["criteria"]:
            tests.append({
                "name": test_name(e, c),
                "score": c["points"],
                "max_score": c["max_points"],
                "status": "passed" if c["passed"] else "failed",
                "output": c["reason"],
                "tags": [c["kind"]] + ([f"level {c['level']}"] if "levels" in e else []),
            })
    summary = "; ".join(f"{e['exercise']} {fmt(e['points'])}/{fmt(e['max_points'])} "
                        f"{e['status']}{levels_in_words(e)}" for e in student["exercises"])
    output = f"{fmt(points)}/{fmt(total)} points: {summary}"
    return {
        "score": points,
        "execution_time": round(student.get("seconds", 0), 1),
        "output": f"{note}\n{output}" if note else output,
        "visibility": "visible",
        "tests": tests,
    }
