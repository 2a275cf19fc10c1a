/* A rubric read and scored in C; see rubric.h. The file format is the part
 * of Python's configparser that grader/rubric.py reads it with: [sections],
 * "key = value" (or "key: value"), keys in any case, whole-line comments
 * after # or ;, inline comments after " ;", and indented continuation lines. */
#include "rubric.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_SECTIONS = RUBRIC_MAX_CRITERIA + 1, MAX_KEYS = 12, LINE = 1024 };

typedef struct {
    char key[RUBRIC_NAME], value[RUBRIC_TEXT];
} pair;

typedef struct {
    char name[RUBRIC_NAME];
    int n;
    pair p[MAX_KEYS];
} section;

typedef struct {
    int n;
    section s[MAX_SECTIONS];
} ini;

static int say(char *why, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int say(char *why, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, size, fmt, ap);
    va_end(ap);
    return -1;
}

static char *trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    size_t n = strlen(s);
    while (n > 0 && isspace((unsigned char)s[n - 1]))
        s[--n] = '\0';
    return s;
}

/* Cuts an inline comment: a ';' that follows whitespace. */
static void cut_comment(char *line)
{
    for (char *c = line + 1; *c; c++)
        if (*c == ';' && isspace((unsigned char)c[-1])) {
            *c = '\0';
            return;
        }
}

static void append(char *value, const char *more)
{
    size_t used = strlen(value);
    snprintf(value + used, RUBRIC_TEXT - used, "%s%s", used ? " " : "", more);
}

static int read_ini(FILE *f, const char *path, ini *d, char *why, size_t size)
{
    char buf[LINE];
    section *cur = NULL;
    pair *last = NULL; /* the option a continuation line adds to */
    size_t last_indent = 0;
    for (int no = 1; fgets(buf, sizeof buf, f); no++) {
        buf[strcspn(buf, "\r\n")] = '\0';
        size_t indent = strspn(buf, " \t");
        char *text = trim(buf);
        if (*text == '#' || *text == ';')
            continue;
        cut_comment(buf);
        text = trim(buf);
        if (!*text)
            continue;
        if (last && indent > last_indent) {
            append(last->value, text);
            continue;
        }
        last = NULL;
        size_t n = strlen(text);
        if (text[0] == '[' && text[n - 1] == ']') {
            text[n - 1] = '\0';
            for (int i = 0; i < d->n; i++)
                if (!strcmp(d->s[i].name, text + 1))
                    return say(why, size, "%s: section %s appears twice", path, text + 1);
            if (d->n == MAX_SECTIONS)
                return say(why, size, "%s: more than %d criteria", path, RUBRIC_MAX_CRITERIA);
            cur = &d->s[d->n++];
            memset(cur, 0, sizeof *cur);
            snprintf(cur->name, sizeof cur->name, "%s", text + 1);
            continue;
        }
        size_t at = strcspn(text, "=:");
        if (!cur || !text[at])
            return say(why, size, "%s, line %d: %s", path, no,
                       cur ? "not a key = value line" : "a key before any [section]");
        if (cur->n == MAX_KEYS)
            return say(why, size, "%s [%s]: too many keys", path, cur->name);
        text[at] = '\0';
        last = &cur->p[cur->n++];
        last_indent = indent;
        snprintf(last->key, sizeof last->key, "%s", trim(text));
        for (char *c = last->key; *c; c++)
            *c = (char)tolower((unsigned char)*c);
        snprintf(last->value, sizeof last->value, "%s", trim(text + at + 1));
    }
    return 0;
}

static const char *get(const section *s, const char *key)
{
    for (int i = 0; i < s->n; i++)
        if (!strcmp(s->p[i].key, key))
            return s->p[i].value;
    return NULL;
}

/* A non-negative finite number (positive when asked), as rubric.py's _number. */
static int number(const section *s, const char *key, int positive, double *v, const char *path,
                  char *why, size_t size)
{
    const char *text = get(s, key);
    char *end;
    errno = 0;
    *v = strtod(text, &end);
    if (end == text || *end)
        return say(why, size, "%s [%s] %s = '%s': not a number", path, s->name, key, text);
    if (!isfinite(*v) || *v < 0 || (positive && *v == 0))
        return say(why, size, "%s [%s] %s = '%s': must be a %s number", path, s->name, key, text,
                   positive ? "positive" : "non-negative");
    return 0;
}

static int known(const char *key, const char *const *keys)
{
    for (; *keys; keys++)
        if (!strcmp(key, *keys))
            return 1;
    return 0;
}

/* Each one required; "levels" and "gpus" may be there too. */
static const char *const EXERCISE_KEYS[] = {"title", "time_limit_s", "memcheck_time_limit_s", NULL};
static const char *const CRITERION_KEYS[] = {"kind", "points", "metric", "min", "max",
                                             "relative_to_solution", "what",
                                             "model_limit", "level", "judged_by", NULL};

/* A level, "1" or "2", as rubric.py's _level; `absent` when the key is not there. */
static int level(const section *s, const char *key, int absent, int *v, const char *path,
                 char *why, size_t size)
{
    const char *text = get(s, key);
    *v = absent;
    if (!text)
        return 0;
    if (strlen(text) != 1 || text[0] < '1' || text[0] > '0' + RUBRIC_MAX_LEVEL)
        return say(why, size, "%s [%s] %s = '%s': must be 1 or 2", path, s->name, key, text);
    *v = text[0] - '0';
    return 0;
}

static int check_exercise(const section *s, rubric *r, const char *path, char *why, size_t size)
{
    double limit;
    for (const char *const *k = EXERCISE_KEYS; *k; k++)
        if (!get(s, *k))
            return say(why, size, "%s [exercise]: %s is missing", path, *k);
    for (int i = 0; i < s->n; i++)
        if (!known(s->p[i].key, EXERCISE_KEYS) && strcmp(s->p[i].key, "levels") &&
            strcmp(s->p[i].key, "gpus")) /* gpus: the grader's (grade.py waives), not the preview's */
            return say(why, size, "%s [exercise]: unknown key '%s'", path, s->p[i].key);
    if (number(s, "time_limit_s", 1, &limit, path, why, size) ||
        number(s, "memcheck_time_limit_s", 1, &limit, path, why, size))
        return -1;
    snprintf(r->title, sizeof r->title, "%s", get(s, "title"));
    return 0;
}

static int criterion(const section *s, rubric_criterion *c, const char *path, char *why,
                     size_t size)
{
    static const char *const required[] = {"kind", "points", "metric", "what"};
    memset(c, 0, sizeof *c);
    for (int i = 0; i < s->n; i++)
        if (!known(s->p[i].key, CRITERION_KEYS))
            return say(why, size, "%s [%s]: unknown key '%s'", path, s->name, s->p[i].key);
    for (size_t i = 0; i < sizeof required / sizeof *required; i++)
        if (!get(s, required[i]))
            return say(why, size, "%s [%s]: %s is missing", path, s->name, required[i]);
    const char *kind = get(s, "kind");
    if (strcmp(kind, "correctness") && strcmp(kind, "concept"))
        return say(why, size, "%s [%s] kind = '%s': must be correctness or concept", path,
                   s->name, kind);
    c->has_min = get(s, "min") != NULL;
    c->has_max = get(s, "max") != NULL;
    c->has_relative = get(s, "relative_to_solution") != NULL;
    if (c->has_relative && !c->has_min)
        return say(why, size, "%s [%s]: relative_to_solution needs min", path, s->name);
    if (c->has_min == c->has_max)
        return say(why, size, "%s [%s]: give min (higher is better) or max (lower is better), "
                   "one of the two", path, s->name);
    if (number(s, "points", 0, &c->points, path, why, size) ||
        (c->has_min && number(s, "min", 0, &c->min, path, why, size)) ||
        (c->has_max && number(s, "max", 0, &c->max, path, why, size)) ||
        (c->has_relative && number(s, "relative_to_solution", 0, &c->relative, path, why, size)))
        return -1;
    c->has_limit = get(s, "model_limit") != NULL;
    if (c->has_limit && number(s, "model_limit", 0, &c->limit, path, why, size))
        return -1;
    if (c->has_limit && (c->has_min ? c->limit < c->min : c->limit > c->max)) {
        char limit[32], bound[32];
        return say(why, size, "%s [%s] model_limit = %s: must lie past the criterion's bound "
                   "(%s), where no honest run gets", path, s->name,
                   rubric_fmt(limit, sizeof limit, c->limit),
                   rubric_fmt(bound, sizeof bound, c->has_min ? c->min : c->max));
    }
    if (level(s, "level", 1, &c->level, path, why, size))
        return -1;
    c->concept = !strcmp(kind, "concept");
    if (get(s, "judged_by") && !c->concept)
        return say(why, size, "%s [%s]: judged_by is for a concept criterion (a wrong result is "
                   "wrong whatever the machine did)", path, s->name);
    const char *judged_by = get(s, "judged_by");
    snprintf(c->judged_by, sizeof c->judged_by, "%s", judged_by ? judged_by : "");
    snprintf(c->name, sizeof c->name, "%s", s->name);
    snprintf(c->metric, sizeof c->metric, "%s", get(s, "metric"));
    snprintf(c->what, sizeof c->what, "%s", get(s, "what"));
    return 0;
}

int rubric_load(const char *path, rubric *r, char *why, size_t size)
{
    static ini d; /* about 100 KiB: not on the stack */
    memset(r, 0, sizeof *r);
    memset(&d, 0, sizeof d);
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(why, size, "%s: %s", path, strerror(errno));
        return errno == ENOENT ? 1 : -1;
    }
    int bad = read_ini(f, path, &d, why, size);
    fclose(f);
    if (bad)
        return -1;
    const section *exercise = NULL;
    for (int i = 0; i < d.n; i++)
        if (!strcmp(d.s[i].name, "exercise"))
            exercise = &d.s[i];
    if (!exercise)
        return say(why, size, "%s: no [exercise] section (title, time_limit_s, "
                   "memcheck_time_limit_s)", path);
    if (check_exercise(exercise, r, path, why, size))
        return -1;
    for (int i = 0; i < d.n; i++)
        if (&d.s[i] != exercise && criterion(&d.s[i], &r->c[r->n++], path, why, size))
            return -1;
    /* levels = 1: a course that does not use the second level (checked all the same) */
    int keep, n = r->n;
    if (level(exercise, "levels", RUBRIC_MAX_LEVEL, &keep, path, why, size))
        return -1;
    r->n = 0;
    for (int i = 0; i < n; i++)
        if (r->c[i].level <= keep) {
            r->c[r->n++] = r->c[i];
            if (r->c[i].level > r->levels)
                r->levels = r->c[i].level;
        }
    if (r->n == 0)
        return say(why, size, "%s: no criteria (one section per criterion)", path);
    return 0;
}

const char *rubric_fmt(char *buf, size_t size, double v)
{
    if (!isfinite(v))
        snprintf(buf, size, "not measured");
    else if (v == floor(v) && fabs(v) < 1e15)
        snprintf(buf, size, "%lld", (long long)v);
    else
        snprintf(buf, size, "%.3g", v);
    return buf;
}

/* rubric.py's fmt_beside: v with as many more digits as it takes not to
 * read as the bound it is judged against (1.0004 against <= 1: "1.0004"). */
static const char *fmt_beside(char *buf, size_t size, double v, double bound)
{
    char b[32];
    rubric_fmt(buf, size, v);
    rubric_fmt(b, sizeof b, bound);
    for (int digits = 4; v != bound && !strcmp(buf, b) && digits <= 12; digits++)
        snprintf(buf, size, "%.*g", digits, v);
    return buf;
}

static double value_of(const char *metric, const char *const *names, const double *values, int n)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(names[i], metric))
            return values[i];
    return NAN;
}

/* rubric.py's outside_physics: 1 when v lies past the criterion's
 * model_limit (above it against a min, below it against a max). */
static int outside_physics(const rubric_criterion *c, double v)
{
    return c->has_limit && isfinite(v) && (c->has_min ? v > c->limit : v < c->limit);
}

/* rubric.py's _judge, without a reference solution: the model's bound. */
static int judge(const rubric_criterion *c, double v, char *reason, size_t size)
{
    char value[32], bound[32];
    if (!isfinite(v)) {
        snprintf(reason, size, "%s not measured (the harness printed no such value)", c->metric);
        return 0;
    }
    if (outside_physics(c, v)) {
        snprintf(reason, size, "%s %s is beyond what the model allows (%s %s, its tolerance "
                 "included): flagged for the instructor, not awarded", c->metric,
                 rubric_fmt(value, sizeof value, v), c->has_min ? "<=" : ">=",
                 rubric_fmt(bound, sizeof bound, c->limit));
        return 0;
    }
    int ok = c->has_max ? v <= c->max : v >= c->min;
    double b = c->has_max ? c->max : c->min;
    snprintf(reason, size, "%s %s, %s %s %s%s", c->metric, fmt_beside(value, sizeof value, v, b),
             ok ? "limit" : "needs", c->has_max ? "<=" : ">=", rubric_fmt(bound, sizeof bound, b),
             c->has_relative ? " (the model's threshold: no reference solution in this run)" : "");
    return ok;
}

/* rubric.py's judged: 1 unless the criterion names a judged_by metric and
 * the run printed it as something other than 1. */
static int judged(const rubric_criterion *c, const char *const *names, const double *values, int n)
{
    double v = c->judged_by[0] ? value_of(c->judged_by, names, values, n) : NAN;
    return !isfinite(v) || v == 1;
}

/* rubric.py's _blocked_by: 0 when a concept criterion of `level` may be
 * scored, else the level whose correctness failed (level one's blocks both). */
static int blocked_by(const int *wrong, int level)
{
    return wrong[1] ? 1 : wrong[level] ? level : 0;
}

double rubric_score(const rubric *r, const char *const *names, const double *values, int n,
                    rubric_result *out)
{
    int wrong[RUBRIC_MAX_LEVEL + 1] = {0}; /* a correctness criterion of that level failed */
    int beyond = 0;
    double points = 0;
    /* rubric.py's rule: one concept value outside physics, and no timing of
     * the run (both levels: one process measured them) is trusted */
    for (int i = 0; i < r->n; i++)
        beyond |= r->c[i].concept && outside_physics(&r->c[i], value_of(r->c[i].metric, names,
                                                                           values, n));
    for (int pass = 0; pass < 2; pass++) /* correctness first: concept needs all of it */
        for (int i = 0; i < r->n; i++) {
            const rubric_criterion *c = &r->c[i];
            rubric_result *o = &out[i];
            if (c->concept != pass)
                continue;
            memset(o, 0, sizeof *o);
            int blocked = c->concept ? blocked_by(wrong, c->level) : 0;
            if (blocked) {
                char which[32] = "";
                if (r->levels > 1)
                    snprintf(which, sizeof which, "level-%d ", blocked);
                snprintf(o->reason, sizeof o->reason, "not scored: a %scorrectness criterion "
                         "failed, and a fast wrong answer earns nothing", which);
                continue;
            }
            double v = value_of(c->metric, names, values, n);
            if (c->concept && beyond && !outside_physics(c, v)) {
                o->scored = 1;
                snprintf(o->reason, sizeof o->reason, "not scored: a value of this run lies "
                         "beyond what the model allows, so no timing of it is trusted");
                continue;
            }
            o->scored = 1;
            if (c->concept && !outside_physics(c, v) && !judged(c, names, values, n)) {
                /* rubric.py's _unjudged, for one run: the grader measures again first */
                o->flagged = 1;
                snprintf(o->reason, sizeof o->reason, "not judged: %s was not 1 in this run (the "
                         "exercise's premise did not hold: its report says why): not awarded, and "
                         "flagged for the instructor; the grader measures such a run again, and a "
                         "run on a quiet GPU is judged", c->judged_by);
                continue;
            }
            o->passed = judge(c, v, o->reason, sizeof o->reason);
            o->flagged = outside_physics(c, v);
            o->points = o->passed ? c->points : 0;
            points += o->points;
            if (!c->concept && !o->passed)
                wrong[c->level] = 1;
        }
    return points;
}

double rubric_points(const rubric *r, const rubric_result *out, int level, double *max)
{
    double points = 0;
    *max = 0;
    for (int i = 0; i < r->n; i++)
        if (level == 0 || r->c[i].level == level) {
            points += out[i].points;
            *max += r->c[i].points;
        }
    return points;
}
