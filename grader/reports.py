"""The grader's outputs: a table for people, a CSV for the gradebook (and
one of totals to import), JUnit XML for an LMS or CI, and Gradescope's
results.json. Each takes the graded
students: dicts with "student", "seconds" and "exercises", a list of what
rubric.score() returned. Standard library only.
"""

import csv
import socket
import time
import xml.etree.ElementTree as ET

from rubric import fmt

CSV_FIELDS = ["student", "exercise", "points", "max_points", "status", "reason"]
IMPORT_FIELDS = ["student", "total", "max"]


def totals(student):
    return (sum(e["points"] for e in student["exercises"]),
            sum(e["max_points"] for e in student["exercises"]))


def table(students, heading):
    """The readable report: per student, each exercise and each criterion."""
    lines = [heading, ""]
    for s in students:
        points, total = totals(s)
        lines.append(f"{s['student']}: {fmt(points)}/{fmt(total)} points")
        for e in s["exercises"]:
            score = f"{fmt(e['points'])}/{fmt(e['max_points'])}"
            lines.append(f"  {e['exercise']}  {e['title'][:50]:<50}  {score:>6}  {e['status']}")
            if e["status"] in ("passed", "partial", "failed"):
                for c in e["criteria"]:
                    mark = "[ok]  " if c["passed"] else "[FAIL]"
                    score = f"{fmt(c['points'])}/{fmt(c['max_points'])}"
                    lines.append(f"        {mark} {score:>5}  {c['name']}: {c['reason']}")
            else:
                lines.append(f"        {e['reason']}")
            if e.get("warning"):
                lines.append(f"        {e['warning']}")
        lines.append("")
    return "\n".join(lines)


def write_csv(path, students):
    """One row per student and exercise: student,exercise,points,max_points,status,reason."""
    with open(path, "w", newline="", encoding="utf-8") as f:
        out = csv.writer(f, lineterminator="\n")
        out.writerow(CSV_FIELDS)
        for s in students:
            for e in s["exercises"]:
                out.writerow([s["student"], e["exercise"], fmt(e["points"]),
                              fmt(e["max_points"]), e["status"], e["reason"]])


def write_import_csv(path, students):
    """One row per student, student,total,max: the total a gradebook imports
    (exercises/README.md, "Gradebooks", says how for Canvas, Moodle and Gradescope)."""
    with open(path, "w", newline="", encoding="utf-8") as f:
        out = csv.writer(f, lineterminator="\n")
        out.writerow(IMPORT_FIELDS)
        for s in students:
            out.writerow([s["student"], *map(fmt, totals(s))])


def write_junit(path, students):
    """JUnit XML in the shape of Bats' junit formatter: <testsuites>, one
    <testsuite> per student, one <testcase> per criterion, a <failure> for
    each criterion short of its points."""
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
        for e, c in cases:
            case = ET.SubElement(suite, "testcase", classname=f"{s['student']}.{e['exercise']}",
                                 name=f"{e['exercise']} {c['name']}: {c['what']}", time="0")
            if c["points"] < c["max_points"] or not c["passed"]:
                failure = ET.SubElement(case, "failure", type="failure")
                failure.text = (f"{fmt(c['points'])}/{fmt(c['max_points'])} points: "
                                f"{c['reason']}")
    ET.indent(suites, space="    ")
    with open(path, "w", encoding="utf-8") as f:
        f.write('<?xml version="1.0" encoding="UTF-8"?>\n')
        f.write(ET.tostring(suites, encoding="unicode"))
        f.write("\n")


def gradescope(student):
    """Gradescope's autograder results (results.json): a test per criterion."""
    points, total = totals(student)
    tests = []
    for e in student["exercises"]:
        for c in e["criteria"]:
            tests.append({
                "name": f"{e['exercise']} {c['name']}: {c['what']}",
                "score": c["points"],
                "max_score": c["max_points"],
                "status": "passed" if c["passed"] else "failed",
                "output": c["reason"],
                "tags": [c["kind"]],
            })
    summary = "; ".join(f"{e['exercise']} {fmt(e['points'])}/{fmt(e['max_points'])} "
                        f"{e['status']}" for e in student["exercises"])
    return {
        "score": points,
        "execution_time": round(student.get("seconds", 0), 1),
        "output": f"{fmt(points)}/{fmt(total)} points: {summary}",
        "visibility": "visible",
        "tests": tests,
    }
