"""index.html: a results folder on one page, for a browser with no network
and no JavaScript: the GPU and how each run ended (the meta file), then per
lab its question (its handout's heading and "The question" paragraph), its
verdicts, each prediction beside its measurement (the CSV report's
predicted_* rows), its figures and its traces. Standard library only.
"""
import glob
import html
import os
import re

from data import DataError

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NAME = "index.html"
# The figure files plot.py draws, by the lab (or traced solution) whose page
# section shows them (figure 1 compares every lab: it heads the page).
FIGURE_LABS = {"2-lab02-bandwidth.png": "lab02", "3-lab04-sweep.png": "lab04",
               "4-lab04-timeline.png": "lab04", "5-lab05-latency.png": "lab05",
               "6-lab07-queues.png": "lab07", "7-lab08-pipeline.png": "lab08",
               "8-lab11-loaders.png": "lab11", "9-lab13-buckets.png": "lab13",
               "10-lab14-partitions.png": "lab14", "11-ex01-schedule.png": "sol01",
               "12-ex04-schedule.png": "sol04", "13-ex06-schedule.png": "sol06",
               "14-ex08-schedule.png": "sol08"}
SUMMARY_FIGURE = "1-speedups.png"
META_ABOUT = ("gpu", "driver", "cuda", "date", "command", "runs")

STYLE = """
body { font: 15px/1.45 system-ui, sans-serif; max-width: 70em; margin: 1.5em auto;
       padding: 0 1em; color: #1a1a1a; background: #fff; }
h1 { font-size: 1.5em; margin-bottom: 0.2em; } h2 { margin-top: 2em; border-bottom:
     1px solid #ccc; } h3 { font-size: 1em; margin: 1.2em 0 0.3em; }
table { border-collapse: collapse; margin: 0.4em 0; }
th, td { border: 1px solid #ddd; padding: 0.2em 0.6em; text-align: left; vertical-align: top; }
td.n { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.yes { color: #006d2c; font-weight: bold; } .no { color: #b30000; font-weight: bold; }
.waived { color: #7a5a00; font-weight: bold; }
.question { color: #333; } .note { color: #555; font-size: 0.9em; }
img { max-width: 100%; border: 1px solid #eee; margin: 0.5em 0; }
code { background: #f4f4f4; padding: 0 0.2em; }
"""


def esc(text):
    return html.escape(str(text), quote=True)


def number(v):
    """As the report prints numbers: four significant figures."""
    return f"{v:.4g}" if isinstance(v, float) else esc(v)


def ending(status):
    """A meta outcome as a word a student reads, and its CSS class."""
    if status == "ok":
        return "observed", "yes"
    if status.startswith("waived"):
        return status, "waived"  # with the lab's one line saying why
    if status.startswith("effect not observed"):
        return "not observed (exit 4)", "no"
    return status, "no"


def question(lab):
    """The handout's heading and its "The question." paragraph, as text."""
    found = sorted(glob.glob(os.path.join(ROOT, "labs", f"{lab.split('_')[0]}_*", "README.md")))
    if not found:
        return lab, ""
    with open(found[0], errors="replace") as f:
        lines = f.read().split("\n")
    heading = lines[0].lstrip("# ").strip()
    para, inside = [], False
    for line in lines[1:]:
        if line.startswith("**The question.**"):
            inside = True
        if inside:
            if not line.strip():
                break
            para.append(line.strip())
    text = re.sub(r"\*\*The question\.\*\*\s*", "", " ".join(para))
    return heading, re.sub(r"[*`]", "", text)


def runs(results):
    """The meta file's runs, in order: (name, outcome)."""
    skip = set(META_ABOUT)
    return [(k, v) for k, v in results.meta.items()
            if k not in skip and not k.startswith("command")]


def lab_of(run):
    """lab04-ratio-0.5, lab04-trace -> lab04; lab01_ptds stays itself."""
    return re.sub(r"(\.run\d+|-ratio-[0-9.]+|-trace)$", "", run)


def verdicts(report):
    """Each verdict and whether it was observed. Its value is left out: the
    unit of a `%` verdict's value changed (a fraction in older reports, such
    as docs/results/h100's, a percentage since), and the page must not
    misstate it; the prediction table below carries the numbers."""
    rows = [f"<tr><td>{esc(metric)}</td><td class=\"{'yes' if value == 1 else 'no'}\">"
            f"{'yes' if value == 1 else 'NO'}</td></tr>"
            for variant, metric, value, unit in report.rows
            if variant == "verdict" and unit == "observed"]
    if not rows:
        return ""
    return ("<h3>Verdicts</h3><table><tr><th>verdict</th><th>observed</th></tr>"
            + "".join(rows) + "</table>")


def predictions(report):
    """Every predicted_M row beside its variant's M row: the model, the
    median, their ratio and the p5-p95 (where the report has them)."""
    rows = []
    for variant, metric, value, unit in report.rows:
        if not metric.startswith("predicted_") or isinstance(value, str):
            continue
        measured = metric[len("predicted_"):]
        if not report.has(variant, measured) or isinstance(report.text(variant, measured), str):
            continue
        median = report.value(variant, measured)
        spread = (f"{number(report.value(variant, measured + '_p5'))} - "
                  f"{number(report.value(variant, measured + '_p95'))}"
                  if report.has(variant, measured + "_p5") else "")
        model = report.text(variant, "model_" + measured) or ""
        ratio = f"x{median / value:.2f}" if value else ""
        rows.append(f"<tr><td>{esc(variant)}</td><td>{esc(measured)}</td>"
                    f"<td class=\"n\">{number(value)}</td><td class=\"n\">{number(median)}</td>"
                    f"<td class=\"n\">{ratio}</td><td class=\"n\">{spread}</td>"
                    f"<td>{esc(unit)}</td><td>{esc(model)}</td></tr>")
    if not rows:
        return ""
    return ("<h3>Predicted and measured</h3><table><tr><th>variant</th><th>metric</th>"
            "<th>predicted</th><th>measured (median)</th><th>ratio</th><th>p5 - p95</th>"
            "<th>unit</th><th>model</th></tr>" + "".join(rows) + "</table>")


def figures(results, out, lab):
    parts = []
    for name, owner in FIGURE_LABS.items():
        path = os.path.join(out, name)
        if owner == lab and os.path.isfile(path):
            parts.append(f'<img src="{esc(name)}" alt="{esc(name)}: a figure of {esc(lab)}">')
    return "".join(parts)


def traces(results, out, lab):
    links = []
    for name in (f"{lab}-trace.json", f"{lab}-trace.txt"):
        if results.has(name):
            href = os.path.relpath(results.path(name), out)
            links.append(f'<a href="{esc(href)}">{esc(name)}</a>')
    if not links:
        return ""
    return ("<h3>Trace</h3><p>" + " and its report ".join(links) + ". <span class=\"note\">"
            "Open the JSON in Perfetto: ui.perfetto.dev, then <em>Open trace file</em> (the "
            "trace stays on your machine), or in Chrome at chrome://tracing.</span></p>")


def lab_section(results, out, lab, ended):
    heading, asked = question(lab)
    parts = [f'<h2 id="{esc(lab)}">{esc(heading if lab in heading else lab + ": " + heading)}'
             f"</h2>"]
    if asked:
        parts.append(f'<p class="question"><strong>The question.</strong> {esc(asked)}</p>')
    rows = "".join(f"<tr><td>{esc(run)}</td><td class=\"{css}\">{esc(word)}</td>"
                   f"<td><code>{esc(results.meta.get('command ' + run, ''))}</code></td></tr>"
                   for run, (word, css) in ended)
    parts.append("<h3>How each run ended</h3><table><tr><th>run</th><th>ended</th>"
                 f"<th>command</th></tr>{rows}</table>")
    if results.has(f"{lab}.csv"):
        try:
            report = results.report(lab)
            parts += [verdicts(report), predictions(report)]
        except DataError as e:
            parts.append(f'<p class="no">{esc(e)}</p>')
    parts += [figures(results, out, lab), traces(results, out, lab)]
    return "\n".join(p for p in parts if p)


def write(results, out):
    """Writes out/index.html; returns its path."""
    by_lab = {}
    for run, status in runs(results):
        by_lab.setdefault(lab_of(run), []).append((run, ending(status)))
    about = "".join(f"<tr><th>{esc(k)}</th><td>{esc(results.meta.get(k, 'unknown'))}</td></tr>"
                    for k in META_ABOUT)
    contents = " · ".join(f'<a href="#{esc(lab)}">{esc(lab)}</a>' for lab in by_lab)
    summary = (f'<h2>What each fix buys</h2><img src="{SUMMARY_FIGURE}" alt="figure 1: each '
               'lab\'s fix over its trap, measured beside predicted">'
               if os.path.isfile(os.path.join(out, SUMMARY_FIGURE)) else "")
    body = "\n".join(lab_section(results, out, lab, ended) for lab, ended in by_lab.items())
    page = (f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>streamlab results: {esc(results.gpu)}</title><style>{STYLE}</style>"
            f"</head><body>\n<h1>streamlab results on {esc(results.gpu)}</h1>\n"
            f"<p class=\"note\">Every number below is read from this folder's reports "
            f"(plots/page.py); the figures beside them are make plots'.</p>\n"
            f"<table>{about}</table>\n<p>{contents}</p>\n{summary}\n{body}\n</body></html>\n")
    path = os.path.join(out, NAME)
    with open(path, "w") as f:
        f.write(page)
    return path
