"""Rubrics, and scoring a graded run against one.

A rubric (grader/rubrics/exNN.ini) says what an exercise's criteria are worth
and when each passes; exercises/README.md explains the format to instructors.
The exercise's program (exercises/given/exNN.cu) printed the metrics the
criteria name; grade.py recorded them in an outcome (see grade.py's
grade_exercise for its fields). exercises/given/rubric.c reads and scores a
rubric by the same rules, for the points preview that ./exNN prints
(tests/cpu_grade.bats holds the two to the same points). Standard library
only.
"""

import configparser
import difflib
import math
import os
import re
import statistics

KINDS = ("correctness", "concept")
LEVELS = (1, 2)
EXERCISE_KEYS = {"title", "time_limit_s", "memcheck_time_limit_s"}   # each one required
OPTIONAL_EXERCISE_KEYS = {"levels", "gpus"}
CRITERION_KEYS = {"kind", "points", "metric", "min", "max", "relative_to_solution", "what",
                  "model_limit", "level", "judged_by"}
# The status of an exercise for the instructor to look at: a value outside
# physics (outside_physics), or a result line the student's code printed
# (runner.run_pass). It earns nothing there.
FLAGGED = "flagged"
# The statuses of an exercise that ran and was scored criterion by criterion
# (the others say why it never was: missing, build_error, timed_out, ...).
SCORED = ("passed", "partial", "failed", FLAGGED)
# The status of an exercise this grading run's machine cannot run at all (its
# rubric's gpus is more than the worker has): no criteria, no points, and
# none in the total, for anyone; the reason says what it needs.
WAIVED = "waived"


class RubricError(Exception):
    """A rubric file that cannot be used: the message says which file, section and key."""


# How a given program gives a metric (grading.h): its name a string literal.
GIVES = re.compile(r'\bgrading_value(?:_withheld)?\(\s*"([^"\\]+)"')
# The given programs, and grading.c beside them, which gives every program's
# gpu_shared.
GIVEN = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                                     "exercises", "given"))


def fmt(value):
    """A number as a person reads it: 3, 0.5, 1.87, 1.2e-05."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "not measured"
    if float(value).is_integer() and abs(value) < 1e15:
        return str(int(value))
    return f"{value:.3g}"


def fmt_beside(value, bound):
    """fmt(value), with as many more digits as it takes not to read as the
    bound it is judged against: 1.0004 against <= 1 is "1.0004", not "1"."""
    text = fmt(value)
    digits = 4
    while value != bound and text == fmt(bound) and digits <= 12:
        text, digits = f"{value:.{digits}g}", digits + 1
    return text


def _number(parser, section, key, path, positive=False):
    text = parser.get(section, key)
    try:
        value = float(text)
    except ValueError:
        raise RubricError(f"{path} [{section}] {key} = {text!r}: not a number") from None
    if not math.isfinite(value) or value < 0 or (positive and value == 0):
        raise RubricError(f"{path} [{section}] {key} = {text!r}: must be a "
                          f"{'positive' if positive else 'non-negative'} number")
    return value


def load(path, exercise):
    """The rubric in `path` as a dict: title, time limits, and criteria in file order.
    Each metric and judged_by must name a metric that
    exercises/given/<exercise>.cu (or grading.c, for every program) gives:
    _check_names."""
    parser = configparser.ConfigParser(interpolation=None, inline_comment_prefixes=(";",))
    try:
        with open(path, encoding="utf-8") as f:
            parser.read_file(f)
    except (OSError, configparser.Error) as e:
        raise RubricError(f"{path}: {e}") from None
    if not parser.has_section("exercise"):
        raise RubricError(f"{path}: no [exercise] section (title, time_limit_s, "
                          "memcheck_time_limit_s)")
    for key in EXERCISE_KEYS:
        if not parser.has_option("exercise", key):
            raise RubricError(f"{path} [exercise]: {key} is missing")
    unknown = set(parser.options("exercise")) - EXERCISE_KEYS - OPTIONAL_EXERCISE_KEYS
    if unknown:
        raise RubricError(f"{path} [exercise]: unknown key {sorted(unknown)[0]!r}")
    rubric = {
        "exercise": exercise,
        "title": parser.get("exercise", "title"),
        "time_limit_s": _number(parser, "exercise", "time_limit_s", path, positive=True),
        "memcheck_time_limit_s": _number(parser, "exercise", "memcheck_time_limit_s", path,
                                         positive=True),
        "criteria": [],
    }
    every = [_criterion(parser, name, path) for name in parser.sections() if name != "exercise"]
    # levels = 1: a course that does not use the second level (checked all the same)
    kept = (_level(parser, "exercise", "levels", path)
            if parser.has_option("exercise", "levels") else max(LEVELS))
    rubric["criteria"] = [c for c in every if c["level"] <= kept]
    if not rubric["criteria"]:
        raise RubricError(f"{path}: no criteria (one section per criterion)")
    rubric["levels"] = max(c["level"] for c in rubric["criteria"])
    # gpus = N: the exercise needs N GPUs in one process (ex13: two NCCL ranks)
    rubric["gpus"] = (int(_number(parser, "exercise", "gpus", path, positive=True))
                      if parser.has_option("exercise", "gpus") else 1)
    _check_names(every, path, os.path.join(GIVEN, exercise + ".cu"))
    return rubric


def metrics_given(program):
    """The names of the metrics a given program (exercises/given/exNN.cu)
    gives, with grading.c's, which every program gives: a set."""
    given = set()
    for source in (program, os.path.join(os.path.dirname(program), "grading.c")):
        with open(source, encoding="utf-8") as f:
            given |= set(GIVES.findall(f.read()))
    return given


def _check_names(criteria, path, program):
    """A metric or judged_by that names a metric `program` never gives is a
    typo, refused here, before any run, rather than found when scoring: a
    metric would read "not measured" in every run and fail everyone, and a
    judged_by would leave every run judged (judged() takes a missing metric
    for a run recorded before its program gave it)."""
    try:
        given = metrics_given(program)
    except OSError as e:
        raise RubricError(f"{path}: cannot read its program: {e}") from None
    for c in criteria:
        for key in ("metric", "judged_by"):
            name = c[key]
            if name is not None and name not in given:
                near = difflib.get_close_matches(name, sorted(given), n=1)
                raise RubricError(f"{path} [{c['name']}] {key} = {name!r}: {program} prints no "
                                  f"such metric{f' (did you mean {near[0]}?)' if near else ''}")


def _level(parser, section, key, path):
    text = parser.get(section, key)
    if text not in [str(n) for n in LEVELS]:
        raise RubricError(f"{path} [{section}] {key} = {text!r}: must be "
                          f"{' or '.join(map(str, LEVELS))}")
    return int(text)


def _criterion(parser, name, path):
    keys = set(parser.options(name))
    unknown = keys - CRITERION_KEYS
    if unknown:
        raise RubricError(f"{path} [{name}]: unknown key {sorted(unknown)[0]!r} "
                          f"(known: {', '.join(sorted(CRITERION_KEYS))})")
    for key in ("kind", "points", "metric", "what"):
        if key not in keys:
            raise RubricError(f"{path} [{name}]: {key} is missing")
    kind = parser.get(name, "kind")
    if kind not in KINDS:
        raise RubricError(f"{path} [{name}] kind = {kind!r}: must be correctness or concept")
    if "relative_to_solution" in keys and "min" not in keys:
        raise RubricError(f"{path} [{name}]: relative_to_solution needs min, the threshold "
                          "used when no reference solution ran")
    if ("min" in keys) == ("max" in keys):
        raise RubricError(f"{path} [{name}]: give min (higher is better) or max (lower is "
                          "better), one of the two")
    def optional(key):
        return _number(parser, name, key, path) if key in keys else None
    limit, bound = optional("model_limit"), optional("min") if "min" in keys else optional("max")
    if "judged_by" in keys and kind != "concept":
        raise RubricError(f"{path} [{name}]: judged_by is for a concept criterion (a wrong "
                          "result is wrong whatever the machine did)")
    if limit is not None and (limit < bound if "min" in keys else limit > bound):
        raise RubricError(f"{path} [{name}] model_limit = {fmt(limit)}: must lie past the "
                          f"criterion's bound ({fmt(bound)}), where no honest run gets")
    return {
        "name": name,
        "kind": kind,
        "points": _number(parser, name, "points", path),
        "metric": parser.get(name, "metric"),
        "min": optional("min"),
        "max": optional("max"),
        "relative": optional("relative_to_solution"),
        "limit": optional("model_limit"),
        "what": parser.get(name, "what"),
        "level": _level(parser, name, "level", path) if "level" in keys else 1,
        # judged_by = M: the value is judged only in a run whose metric M is 1
        # (the exercise's premise held there: judged() below)
        "judged_by": parser.get(name, "judged_by") if "judged_by" in keys else None,
    }


# ---- scoring ------------------------------------------------------------------------

def metric_value(metrics, metric):
    """metrics[metric] as a float, or None when it is missing or not a finite number."""
    value = (metrics or {}).get(metric)
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    return None


def _threshold(criterion, reference):
    """(bound, why): the bound a value is held to, and where it came from."""
    if criterion["max"] is not None:
        return criterion["max"], ""
    if criterion["relative"] is None:
        return criterion["min"], ""
    ref = metric_value(reference, criterion["metric"])
    if ref is None:
        return criterion["min"], " (the model's threshold: no reference solution in this run)"
    bound = criterion["relative"] * ref
    return bound, (f" ({fmt(criterion['relative'])} x the reference solution's {fmt(ref)}, "
                   "measured in this run)")


def outside_physics(criterion, value):
    """The text of a flag when `value` lies past the criterion's model_limit,
    else None. model_limit is the best value the model allows, its tolerance
    included (the rubric's comment says where both come from): above it for
    a criterion with a min, below it for one with a max. No honest run gets
    there, so such a value is not rewarded: it says the measurement was gamed
    or broken, which is for the instructor to look at. The one rule, which
    exercises/given/rubric.c's preview follows too."""
    limit = criterion.get("limit")
    if value is None or limit is None:
        return None
    past = value > limit if criterion["max"] is None else value < limit
    if not past:
        return None
    return (f"{criterion['metric']} {fmt(value)} is beyond what the model allows "
            f"({'<=' if criterion['max'] is None else '>='} {fmt(limit)}, its tolerance "
            "included): flagged for the instructor, not awarded")


# Only a shortfall a busy moment can explain is measured again (grade.py).
# Against the reference solution's number, measured minutes earlier in
# another process: a value at least NEAR_BOUND of its bound (a grading run of
# the reference solutions lost ex12's 4 points at 0.74 of it; H100,
# 2026-11-23). Against a bound of its own, where every run measures its
# baseline and model afresh round by round: within NEAR_OWN_BOUND of it (a
# min; a max, at most the bound over it). The reference solutions' runs fall
# up to about 12% below their median (ex04's level two: 0.885 in a grading
# run and 0.899 in 217 runs on seven H100s, against a median of 1.00); further
# off is another design, not a busy moment (as handed out, ex04 runs serially
# at 1.0x against 1.3x). A program that never tried is not run six more times.
NEAR_BOUND = 2 / 3
NEAR_OWN_BOUND = 0.85


def near_bound(criterion, metrics, reference):
    """Whether a concept criterion's value in `metrics` falls short of its
    bound (the reference's metrics set it for one relative to the solution)
    by no more than a busy moment can explain."""
    value = metric_value(metrics, criterion["metric"])
    if criterion["kind"] != "concept" or value is None:
        return False
    if criterion["relative"] is not None:
        ref = metric_value(reference, criterion["metric"])
        return ref is not None and ref > 0 and value >= NEAR_BOUND * criterion["relative"] * ref
    if criterion["max"] is not None:
        return criterion["max"] > 0 and value <= criterion["max"] / NEAR_OWN_BOUND
    return criterion["min"] > 0 and value >= NEAR_OWN_BOUND * criterion["min"]


def judged(criterion, metrics):
    """Whether a run's `metrics` may judge the criterion: always, unless it
    names a judged_by metric, which must then be 1. An exercise sets that
    metric to 0 when what its criterion tells apart did not hold in the run
    (ex04's level two: too few rounds in which a double buffer falls short
    of the target, after it measured again itself): such a run says nothing
    either way, so it neither passes nor fails the criterion; grade.py
    measures again (measure_again), and a criterion that no run could judge
    is flagged for the instructor.
    A run without the metric (recorded before its program printed it) is
    judged, as it was then: a name the program never gives (a typo) cannot
    reach here, since load() refuses it."""
    name = criterion.get("judged_by")
    value = None if name is None else metric_value(metrics, name)
    return value is None or value == 1


def _unjudged(criterion, pairs, judged_again):
    """The reason of a criterion that its runs could not judge: the first
    run alone (`pairs` None or []), or too few of the `pairs` made again
    (`judged_again` of them judged it)."""
    name = criterion["judged_by"]
    if not pairs:
        return (f"not judged: {name} was not 1 in this run (the exercise's premise did not "
                "hold: its report says why): not awarded, and flagged for the instructor; the "
                "grader measures such a run again, and a run on a quiet GPU is judged")
    return (f"not judged: {name} was 1 in {judged_again} of the {len(pairs)} runs made again, "
            "not in most (the exercise's premise did not hold: its report says why): not "
            "awarded, flagged for the instructor to grade again on a quiet GPU (where a run "
            "with gpu_shared 0 is not judged either, the submission itself spoils it)")


def _median(values):
    return statistics.median(values) if values else None


def _short(criterion):
    """A value short of any bound: what a run made again that could not judge
    the criterion counts as in a median, so that it can never help a pass."""
    return -math.inf if criterion["max"] is None else math.inf


def paired_ratio(criterion, pairs, spoilt=0):
    """The median over `pairs` (each {"student": metrics, "reference":
    metrics}, measured one right after the other) of the student's value over
    the reference's, `spoilt` more counted short; None when no pair has both."""
    metric = criterion["metric"]
    ratios = [s / r for s, r in ((metric_value(p["student"], metric),
                                  metric_value(p.get("reference"), metric)) for p in pairs)
              if s is not None and r]
    return _median(ratios + [_short(criterion)] * spoilt) if ratios else None


def again_value(criterion, pairs, spoilt=0):
    """The median of the student's values over `pairs` (the measure pass run
    again), `spoilt` more counted short; None when none has it."""
    values = [v for v in (metric_value(p["student"], criterion["metric"]) for p in pairs)
              if v is not None]
    return _median(values + [_short(criterion)] * spoilt) if values else None


def _judge(criterion, value, reference, pairs=None, spoilt=0):
    """(passed, text, flag) for one value; flag: outside_physics's text when the
    value, or the median of the runs made again, lies past the model. With
    `pairs` (the grader measured the student again, PAIRS_AGAIN times,
    after a concept criterion fell just short: grade.py's measure_again),
    the new measurements decide: a criterion relative to the solution reads
    the median of the per-pair ratios (the reference was measured again
    too, each time right before the student: both sides met the same moment
    of the machine), any other the median of the new values (each run of
    the program measures its own baseline and model afresh, round by
    round). A pass never comes from the first measurement read again, nor
    from the best of several. `spoilt`: runs made again that could not
    judge the criterion (judged), left out of `pairs` and counted short of
    the bound in the median, so that a program cannot keep its fast runs by
    spoiling its slow ones."""
    metric = criterion["metric"]
    if value is None:
        return False, f"{metric} not measured (the harness printed no such value)", None
    flag = outside_physics(criterion, value)
    if flag:
        return False, flag, flag
    n = len(pairs or []) + spoilt
    short = f", {spoilt} not judged and counted short of the bound" if spoilt else ""
    ratio = (paired_ratio(criterion, pairs, spoilt)
             if pairs and criterion["relative"] is not None else None)
    if ratio is not None:   # the pairs whose reference run finished
        ok = ratio >= criterion["relative"]
        n = sum(1 for p in pairs if p.get("reference")) + spoilt
        return ok, (f"{metric} {fmt(value)}; measured again beside the reference solution, "
                    f"{n} pair{'s' if n != 1 else ''} in turn{short}: the median pair "
                    f"{fmt_beside(ratio, criterion['relative'])} x the reference's, "
                    f"{'limit' if ok else 'needs'} >= {fmt(criterion['relative'])}"), None
    bound, why = _threshold(criterion, reference)
    median = (again_value(criterion, pairs, spoilt)
              if pairs and criterion["relative"] is None else None)
    what = metric
    if median is not None:
        again = f"measured again {n} time{'s' if n != 1 else ''}{short}"
        what, value = f"{metric} {fmt(value)}; {again}: the median run", median
        flag = outside_physics(criterion, value)
        if flag:   # the runs made again are held to the model as the first one was
            return False, f"{again}: the median run's {flag}", flag
    ok = value <= bound if criterion["max"] is not None else value >= bound
    sign = "<=" if criterion["max"] is not None else ">="
    if pairs and criterion["relative"] is not None:   # and no pair had a reference
        why += (f"; measured again {n} time{'s' if n != 1 else ''}, but no reference run "
                "finished beside them, so the first run's verdict stands")
    return ok, (f"{what} {fmt_beside(value, bound)}, {'limit' if ok else 'needs'} {sign} "
                f"{fmt(bound)}{why}"), None


def memcheck_note(outcome):
    """How the results were checked, for the reasons: memcheck ran clean, found
    errors, was not available, or was turned off."""
    check = outcome.get("check")
    if not check:
        return "no check pass"
    memcheck = check.get("memcheck") or {}
    if not memcheck.get("ran"):
        return memcheck.get("note") or "memcheck not available"
    errors = memcheck.get("errors", 0)
    if errors:
        return (f"compute-sanitizer memcheck found {errors} error{'s' if errors != 1 else ''}: "
                f"{memcheck.get('first') or 'see the memcheck log'}")
    return "checked under compute-sanitizer memcheck"


def _stopped(outcome):
    """(status, reason) when the exercise never got as far as measuring, else None."""
    if outcome.get("problem"):   # the student's folder: two files, nothing readable, ...
        return outcome["problem"]["status"], outcome["problem"]["reason"]
    if not outcome.get("source"):
        return "missing", f"no {outcome['exercise']}_*.cu in the submission"
    build = outcome.get("build") or {}
    if not build.get("ok"):
        return "build_error", f"build failed: {build.get('error') or 'see the build log'}"
    for name in ("measure", "check"):
        run = outcome.get(name)
        if run is None:
            continue
        if run.get("status") != "ok":
            detail = run.get("detail") or "no detail"
            if name == "measure":
                return run.get("status", "error"), detail
            if (run.get("memcheck") or {}).get("errors"):
                # memcheck stops a kernel at its first bad access: the error that
                # ended the run is the consequence, memcheck's finding the cause
                return "failed", f"check pass: {memcheck_note(outcome)} (then: {detail})"
            return run.get("status", "error"), f"check pass: {detail}"
    if outcome.get("measure") is None:
        return "error", "not run"
    return None


SHARED_WARNING = ("warning: another process used the GPU during the measurement, so its "
                  "times are not to be trusted: grade this exercise again on an idle GPU")


def score(rubric, outcome, reference=None):
    """The points of one exercise: a dict with status, reason, points and one
    entry per criterion; with a second level, "levels" too: each level's
    points, max_points and status (points and max_points above stay the
    totals of both). reference: the reference solution's measure-pass
    metrics in this run, or None."""
    result = _score(rubric, outcome, reference)
    if metric_value((outcome.get("measure") or {}).get("metrics"), "gpu_shared"):
        result["reason"] += f"; {SHARED_WARNING}"
        result["warning"] = SHARED_WARNING
    return result


def _score(rubric, outcome, reference):
    if outcome.get("waived"):   # before "missing": the machine, not the student, decides
        return _exercise(rubric, WAIVED, outcome["waived"], [])
    criteria = []
    stopped = _stopped(outcome)
    if stopped:
        status, reason = stopped
        for c in rubric["criteria"]:
            criteria.append(_result(c, 0, False, reason))
        return _exercise(rubric, status, reason, criteria)

    note = memcheck_note(outcome)
    memcheck_errors = (outcome.get("check") or {}).get("memcheck", {}).get("errors", 0)
    passes = [outcome["measure"]] + ([outcome["check"]] if outcome.get("check") else [])
    # the measure pass run again (grade.py's measure_again) checked every output too
    passes += [{"metrics": p["student"]} for p in outcome.get("pairs") or []]
    wrong = set()   # the levels with a correctness criterion failed
    for c in (c for c in rubric["criteria"] if c["kind"] == "correctness"):
        # the worst value over every pass: the largest against a max, the smallest against a min
        values = [metric_value(p.get("metrics"), c["metric"]) for p in passes]
        if None in values:
            value = None
        else:
            value = max(values) if c["max"] is not None else min(values)
        ok, text, _ = _judge(c, value, reference)
        reason = f"{note}; {text}" if memcheck_errors else f"{text} [{note}]"
        ok = ok and not memcheck_errors
        if not ok:
            wrong.add(c["level"])
        criteria.append(_result(c, c["points"] if ok else 0, ok, reason,
                                outside_physics(c, value)))
    concepts = [c for c in rubric["criteria"] if c["kind"] == "concept"]
    metrics = outcome["measure"].get("metrics")
    measured = {c["name"]: metric_value(metrics, c["metric"]) for c in concepts}
    # One measurement outside physics and none of the run's timings is to be
    # trusted: whatever made it (work the program's own stages did not
    # expect, a gamed timer) touched the others too. One process measured
    # both levels, so this holds across them.
    beyond = next((c["name"] for c in concepts if outside_physics(c, measured[c["name"]])), None)
    for c in concepts:
        value = measured[c["name"]]
        flag = outside_physics(c, value)
        blocked = _blocked_by(rubric, c, wrong)
        if blocked is not None:
            criteria.append(_result(c, 0, False, f"not scored: a {blocked}correctness "
                                    "criterion failed, and a fast wrong answer earns nothing"))
        elif beyond and not flag:
            criteria.append(_result(c, 0, False, f"not scored: {beyond} lies beyond what the "
                                    "model allows, so no timing of this run is trusted"))
        else:
            # runs made again decide (judged ones; judged_by: most must be)
            pairs = outcome.get("pairs")
            usable = [p for p in pairs if judged(c, p["student"])] if pairs else []
            spoilt = len(pairs or []) - len(usable)
            if not flag and (2 * len(usable) <= len(pairs) if pairs else not judged(c, metrics)):
                reason = _unjudged(c, pairs, len(usable))
                if outcome.get("again_stopped"):
                    reason += f"; not measured again: {outcome['again_stopped']}"
                criteria.append(dict(_result(c, 0, False, reason, reason), unjudged=True))
                continue
            ok, text, again_flag = _judge(c, value, reference, usable, spoilt)
            if not ok and outcome.get("again_stopped"):
                text += f"; not measured again: {outcome['again_stopped']}"
            criteria.append(_result(c, c["points"] if ok else 0, ok, text, flag or again_flag))
    order = {c["name"]: i for i, c in enumerate(rubric["criteria"])}
    criteria.sort(key=lambda r: order[r["name"]])

    points = sum(r["points"] for r in criteria)
    total = sum(r["max_points"] for r in criteria)
    flags = [f"{r['name']}: {r['reason']}" for r in criteria if r.get("flag")]
    if flags:   # the status column of grades.csv is where an instructor sees it
        result = _exercise(rubric, FLAGGED, "; ".join(flags), criteria)
        result["flags"] = flags
        return result
    if points >= total:
        return _exercise(rubric, "passed", f"full marks [{note}]", criteria)
    failed = [f"{r['name']}: {r['reason']}" for r in criteria
              if not r["passed"] and (r["kind"] == "correctness"
                                      or _blocked_by(rubric, r, wrong) is None)]
    if wrong:
        which = "" if 1 in wrong else "level-2 "
        failed.append(f"the {which}concept criteria were not scored (a fast wrong answer "
                      "earns nothing)")
    return _exercise(rubric, "partial" if points > 0 else "failed", "; ".join(failed), criteria)


def _blocked_by(rubric, criterion, wrong):
    """None when a concept criterion may be scored, given the levels with a
    wrong result; else the words that name the level ('' in a rubric of one
    level). A level's concept criteria need its own results right, and level
    one's: level two builds on it."""
    level = 1 if 1 in wrong else criterion["level"] if criterion["level"] in wrong else None
    if level is None:
        return None
    return f"level-{level} " if rubric["levels"] > 1 else ""


def _result(criterion, points, passed, reason, flag=None):
    result = {"name": criterion["name"], "kind": criterion["kind"], "what": criterion["what"],
              "points": points, "max_points": criterion["points"], "passed": passed,
              "reason": reason, "level": criterion["level"]}
    if flag:
        result["flag"] = flag
    return result


def _exercise(rubric, status, reason, criteria):
    result = {"exercise": rubric["exercise"], "title": rubric["title"], "status": status,
              "reason": reason, "points": sum(r["points"] for r in criteria),
              "max_points": sum(r["max_points"] for r in criteria), "criteria": criteria}
    if rubric["levels"] > 1:   # points shown apart; the totals above stay the gradebook's
        result["levels"] = [_level_result(level, status, criteria)
                            for level in range(1, rubric["levels"] + 1)]
    return result


def _level_result(level, status, criteria):
    """One level's points and status, in the exercise's words: the
    exercise's own status when it never got to be scored (a build error
    stops both levels), flagged when a value of this level is."""
    mine = [r for r in criteria if r["level"] == level]
    points, total = sum(r["points"] for r in mine), sum(r["max_points"] for r in mine)
    if status in SCORED:
        status = (FLAGGED if any(r.get("flag") for r in mine) else "passed" if points >= total
                  else "partial" if points > 0 else "failed")
    return {"level": level, "points": points, "max_points": total, "status": status}
