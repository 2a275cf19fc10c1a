#!/usr/bin/env python3
"""Makes tests/fixtures/h200x2-lab13/lab13.csv, the report `./lab13 --csv`
would have printed, from a real lab13 report in JSON.

  tests/tools/lab13_csv_fixture.py IN.json > OUT.csv

Where the numbers come from: tests/fixtures/h200x2-lab13-quick.json is
`./lab13 --quick --json` on two H200s (NVLink, driver 580.159.04, the
nvidia-nccl-cu13 wheel's NCCL 2.28.9), 2026-11-23, as recorded, unchanged.
No GPU had run `./lab13 --csv` yet; figure 9 reads the CSV, so this writes
it from that run. Every row's text is what common/report.c's CSV writer
prints for the same call: values with %.10g (as the JSON has them), fields
quoted as RFC 4180 quotes them, a report_compare() as its predicted_,
model_, median, _p5 and _p95 rows, a report_stats() as the last three.

What the JSON does not keep is the order between its lists: it holds the
parameters, measurements, predictions, checks and verdicts apart. Within
each list the order is the calls'; the lists are interleaved here as
lab13.cu and decides.cu make their calls in a two-GPU run (see ORDER).
A report this does not know how to place (another verdict, a check that is
not the one lab13 makes) is refused rather than guessed.
"""
import json
import sys

HEADER = "lab,variant,metric,value,unit"
# The parameters report_begin() writes: the common ones and every option,
# up to "tracing". Those after it are lab13's own report_param() calls.
LAST_OF_BEGIN = "tracing"
# Where lab13 makes each call that is not a measurement, as a measurement
# row it comes just before (variant, metric): (what goes there).
#   buckets():      report_param(layers ... compute_sms), then lab_attempt()'s
#                   attempts row, the rows of the sweep, then two verdicts;
#   what_decides(): the slow link's sweep (variants "maxCTAs N, ..."), then
#                   report_param(slow_layer_ms, slow_grad_mib), lab_attempt(),
#                   the ways, then two verdicts;
#   main():         report_tally(sums_verified); lab_end(): the machine rows.
PART3_VERDICTS = ("overlap_follows_model", "best_bucket_between")
PART4_VERDICTS = ("full_sms_hide_less", "slow_link_overlap_follows_model")
CHECKS = ("sums_verified",)


def field(text):
    """common/report.c's csv_field(): quoted only when it must be."""
    text = str(text)
    if not any(c in text for c in ',"\n'):
        return text
    return '"' + text.replace('"', '""') + '"'


def number(v):
    if v is None:  # the JSON's null: a NaN or an infinity, which one it does not say
        raise SystemExit("lab13_csv_fixture: a null value: the CSV's text for it is unknown")
    return "%.10g" % v


def main(argv):
    if len(argv) != 2:
        raise SystemExit(__doc__)
    with open(argv[1]) as f:
        # every object as its (key, value) pairs: the parameters hold a name
        # twice (layers: once the option, once lab13's own row in ms)
        doc = json.load(f, object_pairs_hook=list)
    top = dict(doc)
    lab = top["lab"]
    out = [HEADER]

    def row(variant, metric, value, unit):
        out.append(",".join(field(x) for x in (lab, variant, metric, value, unit)))

    device = dict(top["device"])
    row("device", "name", device["name"], "text")
    row("device", "compute_capability", device["compute_capability"], "text")
    row("device", "sm_count", number(device["sm_count"]), "count")

    params = [(name, dict(p)) for name, p in top["parameters"]]
    begin = [n for n, _ in params].index(LAST_OF_BEGIN) + 1
    for name, p in params[:begin]:
        row("parameter", name, number(p["value"]), p["unit"])
    later = params[begin:]

    def emit_params(slow):
        for name, p in later:
            if name.startswith("slow_") == slow:
                row("parameter", name, number(p["value"]), p["unit"])

    verdicts = {dict(v)["name"]: dict(v) for v in dict(top["verdict"])["items"]}
    checks = {dict(c)["name"]: dict(c) for c in top["checks"]}
    unknown = (set(verdicts) - set(PART3_VERDICTS + PART4_VERDICTS)) | (set(checks) - set(CHECKS))
    if unknown or len(checks) != len(CHECKS):
        raise SystemExit(f"lab13_csv_fixture: where these rows go is not known: "
                         f"{sorted(unknown) or 'a missing check'}")

    def emit_verdicts(names):
        for name in names:
            v = verdicts.pop(name)
            row("verdict", name, int(v["observed"]), "observed")
            row("verdict", name + "_value", number(v["value"]), v["unit"])

    predictions = [dict(p) for p in top["predictions"]]
    attempts = 0
    for m in (dict(m) for m in top["measurements"]):
        variant, metric, unit = m["variant"], m["metric"], m["unit"]
        if metric == "attempts":
            emit_params(slow=attempts == 1)
            attempts += 1
        if variant.startswith("maxCTAs ") and PART3_VERDICTS[0] in verdicts:
            emit_verdicts(PART3_VERDICTS)
        if variant == "machine at start" and metric == "link_H2D":
            emit_verdicts(PART4_VERDICTS)
            for name in CHECKS:
                row("check", name, int(checks[name]["passed"]), "pass")
        if "stats" not in m:
            row(variant, metric, number(m["value"]), unit)
            continue
        s = dict(m["stats"])
        first = predictions[0] if predictions else {}
        if (first.get("variant"), first.get("metric")) == (variant, metric):
            p = predictions.pop(0)  # a report_compare(): the prediction first
            row(variant, "predicted_" + metric, number(p["value"]), unit)
            row(variant, "model_" + metric, p["model"], "text")
        row(variant, metric, number(s["median"]), unit)
        row(variant, metric + "_p5", number(s["p5"]), unit)
        row(variant, metric + "_p95", number(s["p95"]), unit)
    if predictions or verdicts or attempts != 2:
        raise SystemExit("lab13_csv_fixture: not a two-GPU lab13 report as lab13.cu writes it "
                         f"({len(predictions)} predictions, {len(verdicts)} verdicts left, "
                         f"{attempts} attempts rows)")
    row("result", "exit_code", number(top["exit_code"]), "code")
    sys.stdout.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main(sys.argv)
