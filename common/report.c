/* The report; see report.h. */
#define _GNU_SOURCE
#include "report.h"
#include "check.h"
#include "exitcodes.h"
#include "json.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum format { FORMAT_TEXT, FORMAT_CSV, FORMAT_JSON };

/* One entry of the report: a parameter, a measurement or a prediction; or a
 * check or a verdict, whose name is its metric, as in the CSV. */
typedef struct {
    char *variant, *metric, *unit;
    char *text;             /* a prediction's formula; a check's or verdict's detail */
    char *limit;            /* a verdict's, as it prints: "at least 90%" */
    double value;           /* the number; a verdict's, the number it read */
    int has_stats, ok;
    stats s;
    const verdict *v;       /* a verdict's declaration, else NULL */
} entry;

typedef struct {
    void *items;
    int n;
} list;

struct report {
    const program_info *prog;
    enum format format;
    int has_device;
    device_info device;
    list params, measurements, predictions, checks, verdicts; /* of entry */
    list interference; /* of entry: what was re-measured (variant), why (text), seen (ok) */
    int others_listed;   /* other processes the driver listed on the GPU; -1: not told */
    int traced;          /* --trace or --timeline: CUPTI's work is in every timing */
    char *cannot_show;   /* report_cannot_show(): why this machine cannot show the effect */
};

/* The verdict report_sharing() adds when another process used the GPU. */
static const verdict GPU_NOT_SHARED = {
    "gpu_not_shared", -INFINITY, SHARED_FRACTION_MIN, "%",
    "another process was using this GPU (see nvidia-smi): the GPU takes turns between "
    "processes, so this run's timings are not its own. Run it again when the GPU is idle",
};

static void *push(list *l, size_t size)
{
    void *grown = realloc(l->items, (size_t)(l->n + 1) * size);
    if (!grown)
        fail_cannot_run("out of host memory in the report");
    l->items = grown;
    char *slot = (char *)grown + (size_t)l->n++ * size;
    memset(slot, 0, size);
    return slot;
}

static char *copy(const char *s)
{
    if (!s)
        return NULL;
    char *c = xmalloc(strlen(s) + 1);
    strcpy(c, s);
    return c;
}

static char *vformat(const char *fmt, va_list ap)
{
    char *s = NULL;
    if (vasprintf(&s, fmt, ap) < 0)
        fail_cannot_run("out of host memory in the report");
    return s;
}

const char *format_value(char *buf, size_t size, double v)
{
    double a = fabs(v);
    if (!isfinite(v))
        snprintf(buf, size, "%s", isnan(v) ? "n/a" : "inf");
    else if (a >= 1000 || v == floor(v))
        snprintf(buf, size, "%.0f", v);
    else if (a >= 100)
        snprintf(buf, size, "%.1f", v);
    else if (a >= 10)
        snprintf(buf, size, "%.2f", v);
    else if (a >= 1)
        snprintf(buf, size, "%.3f", v);
    else
        snprintf(buf, size, "%.3g", v);
    return buf;
}

/* ---- CSV: RFC 4180 quoting, so a GPU name with a comma stays one field ---- */

static void csv_field(const char *s)
{
    if (!strpbrk(s, ",\"\n")) {
        fputs(s, stdout);
        return;
    }
    putchar('"');
    for (; *s; s++) {
        if (*s == '"')
            putchar('"');
        putchar(*s);
    }
    putchar('"');
}

/* "lab,variant,metric," : what every row starts with. */
static void csv_start(const report *r, const char *variant, const char *metric)
{
    csv_field(r->prog->name);
    putchar(',');
    csv_field(variant);
    putchar(',');
    csv_field(metric);
    putchar(',');
}

static void csv_row(const report *r, const char *variant, const char *metric, double value,
                    const char *unit)
{
    csv_start(r, variant, metric);
    printf("%.10g,", value);
    csv_field(unit);
    putchar('\n');
}

/* A row whose value is text (a GPU's name, a model's formula): unit "text". */
static void csv_text_row(const report *r, const char *variant, const char *metric,
                         const char *text)
{
    csv_start(r, variant, metric);
    csv_field(text);
    puts(",text");
}

/* ---- JSON: one document, built from json.h's primitives ---- */

static void json_string(const char *s) { json_write_string(stdout, s); }
static void json_number(double v) { json_write_number(stdout, v); }

static void json_key(const char *key)
{
    json_string(key);
    putchar(':');
}

static void json_rows(const char *key, const list *l)
{
    const entry *rows = l->items;
    json_key(key);
    putchar('[');
    for (int i = 0; i < l->n; i++) {
        const entry *w = &rows[i];
        printf("%s\n    {", i ? "," : "");
        json_key("variant"), json_string(w->variant), putchar(',');
        json_key("metric"), json_string(w->metric), putchar(',');
        json_key("value"), json_number(w->value), putchar(',');
        json_key("unit"), json_string(w->unit);
        if (w->text)
            putchar(','), json_key("model"), json_string(w->text);
        if (w->has_stats) {
            const stats *s = &w->s;
            printf(",");
            json_key("stats");
            printf("{\"n\":%d,", s->n);
            json_key("median"), json_number(s->median), putchar(',');
            json_key("p5"), json_number(s->p5), putchar(',');
            json_key("p95"), json_number(s->p95), putchar(',');
            json_key("min"), json_number(s->min), putchar(',');
            json_key("max"), json_number(s->max), putchar(',');
            json_key("mean"), json_number(s->mean), putchar('}');
        }
        putchar('}');
    }
    fputs(l->n ? "\n  ]" : "]", stdout);
}

static void json_items(const char *key, const char *okname, const list *l)
{
    const entry *items = l->items;
    json_key(key);
    putchar('[');
    for (int i = 0; i < l->n; i++) {
        printf("%s\n    {", i ? "," : "");
        json_key("name"), json_string(items[i].metric), putchar(',');
        json_key(okname), fputs(items[i].ok ? "true" : "false", stdout), putchar(',');
        json_key("detail"), json_string(items[i].text);
        if (items[i].v) {
            putchar(','), json_key("value"), json_number(items[i].value);
            putchar(','), json_key("unit"), json_string(items[i].v->unit);
            putchar(','), json_key("limit"), json_string(items[i].limit);
            putchar(','), json_key("hint");
            if (items[i].ok)
                fputs("null", stdout);
            else
                json_string(items[i].v->hint);
        }
        putchar('}');
    }
    fputs(l->n ? "\n  ]" : "]", stdout);
}

static void json_device(const device_info *d)
{
    json_key("device");
    printf("{");
    json_key("index"), printf("%d,", d->index);
    json_key("name"), json_string(d->name), putchar(',');
    json_key("pci_bus_id"), json_string(d->pci_bus_id), putchar(',');
    json_key("compute_capability"), printf("\"%d.%d\",", d->cc_major, d->cc_minor);
    json_key("sm_count"), printf("%d,", d->sm_count);
    json_key("total_memory_bytes"), printf("%zu,", d->total_memory);
    json_key("async_engine_count"), printf("%d,", d->async_engines);
    json_key("concurrent_kernels"), fputs(d->concurrent_kernels ? "true," : "false,", stdout);
    json_key("priority_least"), printf("%d,", d->priority_least);
    json_key("priority_greatest"), printf("%d,", d->priority_greatest);
    json_key("max_connections"), printf("%d,", d->max_connections);
    json_key("pcie_gen"), printf("%d,", d->pcie_gen);
    json_key("pcie_width"), printf("%d,", d->pcie_width);
    json_key("driver_version"), printf("%d,", d->driver_version);
    json_key("runtime_version"), printf("%d}", d->runtime_version);
}

static entry *add_row(list *l, const char *variant, const char *metric, double value,
                    const char *unit)
{
    entry *w = push(l, sizeof *w);
    w->variant = copy(variant);
    w->metric = copy(metric);
    w->unit = copy(unit);
    w->value = value;
    return w;
}

/* The run's settings as one would type them: "settings: --reps 5 --batches 16";
 * in CSV and JSON each of the program's own options is a parameter of its
 * name (batch-mib: batch_mib), unit "option". */
static void report_settings(report *r, const common_options *opt)
{
    char v[32], name[64];
    if (r->format == FORMAT_TEXT)
        printf("settings:%s --reps %d --retries %d", opt->quick ? " --quick" : "", opt->reps,
               opt->retries);
    for (const option *o = r->prog->options; o && o->name; o++) {
        double value = option_value(o);
        if (isnan(value))
            continue;
        snprintf(name, sizeof name, "%s", o->name);
        for (char *c = name; *c; c++)
            *c = *c == '-' ? '_' : *c;
        add_row(&r->params, "parameter", name, value, "option");
        if (r->format == FORMAT_CSV)
            csv_row(r, "parameter", name, value, "option");
        else if (r->format == FORMAT_TEXT && o->kind != OPT_FLAG)
            printf(" --%s %s", o->name, format_value(v, sizeof v, value));
        else if (r->format == FORMAT_TEXT && value)
            printf(" --%s", o->name);
    }
    if (r->format == FORMAT_TEXT)
        putchar('\n');
}

/* ---- the calls a lab makes ---- */

report *report_begin(const program_info *prog, const common_options *opt, const device_info *d)
{
    report *r = xmalloc(sizeof *r);
    memset(r, 0, sizeof *r);
    r->prog = prog;
    r->others_listed = -1;
    r->format = opt->csv ? FORMAT_CSV : opt->json ? FORMAT_JSON : FORMAT_TEXT;
    if (d) {
        r->has_device = 1;
        r->device = *d;
    }
    if (r->format == FORMAT_TEXT) {
        printf("%s: %s\n", prog->name, prog->title);
        if (d)
            printf("device %d: %s, compute capability %d.%d, %d SMs, driver %d.%d, "
                   "runtime %d.%d\n", d->index, d->name, d->cc_major, d->cc_minor,
                   d->sm_count, d->driver_version / 1000, d->driver_version % 1000 / 10,
                   d->runtime_version / 1000, d->runtime_version % 1000 / 10);
        if (prog->handout)
            printf("the model, and what each line means: %s\n", prog->handout);
    } else if (r->format == FORMAT_CSV) {
        puts("lab,variant,metric,value,unit");
        if (d) {
            char cc[16];
            snprintf(cc, sizeof cc, "%d.%d", d->cc_major, d->cc_minor);
            csv_text_row(r, "device", "name", d->name);
            csv_text_row(r, "device", "compute_capability", cc);
            csv_row(r, "device", "sm_count", d->sm_count, "count");
        }
    }
    report_param(r, "quick", opt->quick, "bool");
    report_param(r, "reps", opt->reps, "count");
    report_settings(r, opt);
    /* CUPTI adds work to every launch and copy: a traced timing is not the
     * timing the lab would report without it, and the report says so. */
    r->traced = opt->trace || opt->timeline;
    report_param(r, "tracing", r->traced, "bool");
    if (r->format == FORMAT_TEXT && r->traced)
        printf("note: tracing is on (--trace/--timeline): the timings include CUPTI's "
               "overhead\n");
    return r;
}

void report_section(report *r, const char *title)
{
    if (r->format != FORMAT_TEXT)
        return;
    printf("\n%s\n", title);
    for (const char *c = title; *c; c++)
        putchar('-');
    putchar('\n');
}

void report_text(report *r, const char *fmt, ...)
{
    if (r->format != FORMAT_TEXT)
        return;
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
}

void report_param(report *r, const char *name, double value, const char *unit)
{
    char v[32];
    add_row(&r->params, "parameter", name, value, unit);
    if (r->format == FORMAT_CSV)
        csv_row(r, "parameter", name, value, unit);
    else if (r->format == FORMAT_TEXT && strcmp(name, "quick") && strcmp(name, "reps") &&
             strcmp(name, "tracing"))
        printf("  %-40s %s %s\n", name, format_value(v, sizeof v, value), unit);
}

void report_value(report *r, const char *variant, const char *metric, double value,
                  const char *unit)
{
    char v[32];
    add_row(&r->measurements, variant, metric, value, unit);
    if (r->format == FORMAT_CSV)
        csv_row(r, variant, metric, value, unit);
    else if (r->format == FORMAT_TEXT)
        printf("  %-22s %-17s %10s %s\n", variant, metric, format_value(v, sizeof v, value),
               unit);
}

void report_data(report *r, const char *variant, const char *metric, double value,
                 const char *unit)
{
    add_row(&r->measurements, variant, metric, value, unit);
    if (r->format == FORMAT_CSV)
        csv_row(r, variant, metric, value, unit);
}

void report_samples(report *r, const char *variant, const char *metric, const double *v, int n,
                    const char *unit)
{
    char name[128];
    if (r->format == FORMAT_TEXT)
        return;
    snprintf(name, sizeof name, "%s_sample", metric);
    for (int i = 0; i < n; i++) {
        add_row(&r->measurements, variant, name, v[i], unit);
        if (r->format == FORMAT_CSV)
            csv_row(r, variant, name, v[i], unit);
    }
}

void report_fact(report *r, const char *metric, double value, const char *unit,
                 const char *fmt, ...)
{
    char v[32], label[64];
    add_row(&r->measurements, "device", metric, value, unit);
    if (r->format == FORMAT_CSV)
        csv_row(r, "device", metric, value, unit);
    if (r->format != FORMAT_TEXT)
        return;
    snprintf(label, sizeof label, "%s", metric);
    for (char *c = label; *c; c++)
        if (*c == '_')
            *c = ' ';
    printf("  %-22s %8s %-6s ", label, format_value(v, sizeof v, value), unit);
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    putchar('\n');
}

static void csv_stats(report *r, const char *variant, const char *metric, const stats *s,
                      const char *unit)
{
    char name[128];
    csv_row(r, variant, metric, s->median, unit);
    snprintf(name, sizeof name, "%s_p5", metric);
    csv_row(r, variant, name, s->p5, unit);
    snprintf(name, sizeof name, "%s_p95", metric);
    csv_row(r, variant, name, s->p95, unit);
}

void report_stats(report *r, const char *variant, const char *metric, const stats *s,
                  const char *unit)
{
    char m[32], lo[32], hi[32];
    entry *w = add_row(&r->measurements, variant, metric, s->median, unit);
    w->has_stats = 1;
    w->s = *s;
    if (r->format == FORMAT_CSV)
        csv_stats(r, variant, metric, s, unit);
    else if (r->format == FORMAT_TEXT)
        printf("  %-22s %-17s %10s %-6s (p5 %s, p95 %s, n=%d)\n", variant, metric,
               format_value(m, sizeof m, s->median), unit, format_value(lo, sizeof lo, s->p5),
               format_value(hi, sizeof hi, s->p95), s->n);
}

void report_compare(report *r, const char *variant, const char *metric, const char *model,
                    double predicted, const stats *measured, const char *unit)
{
    char p[32], m[32], lo[32], hi[32];
    char pmetric[128];
    snprintf(pmetric, sizeof pmetric, "predicted_%s", metric);
    entry *pw = add_row(&r->predictions, variant, metric, predicted, unit);
    pw->text = copy(model);
    entry *w = add_row(&r->measurements, variant, metric, measured->median, unit);
    w->has_stats = 1;
    w->s = *measured;
    if (r->format == FORMAT_CSV) {
        csv_row(r, variant, pmetric, predicted, unit);
        snprintf(pmetric, sizeof pmetric, "model_%s", metric);
        csv_text_row(r, variant, pmetric, model);
        csv_stats(r, variant, metric, measured, unit);
    } else if (r->format == FORMAT_TEXT) {
        printf("  %-22s %-17s predicted %9s  measured %9s %-6s x%.2f  (p5 %s, p95 %s)  = %s\n",
               variant, metric, format_value(p, sizeof p, predicted),
               format_value(m, sizeof m, measured->median), unit,
               predicted != 0 ? measured->median / predicted : NAN,
               format_value(lo, sizeof lo, measured->p5), format_value(hi, sizeof hi, measured->p95),
               model);
    }
}

static entry *add_item(report *r, list *l, const char *kind, const char *name, int ok,
                       const char *fmt, va_list ap)
{
    entry *it = push(l, sizeof *it);
    it->variant = copy(kind);
    it->metric = copy(name);
    it->ok = ok;
    it->text = vformat(fmt, ap);
    if (r->format == FORMAT_CSV)
        csv_row(r, kind, name, ok, kind[0] == 'c' ? "pass" : "observed");
    return it;
}

void report_check(report *r, const char *name, int passed, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    entry *it = add_item(r, &r->checks, "check", name, passed, fmt, ap);
    va_end(ap);
    if (r->format == FORMAT_TEXT)
        printf("  %-6s %s: %s\n", passed ? "[ok]" : "[FAIL]", name, it->text);
}

void report_tally(report *r, const char *name, const tally *t, const char *what)
{
    if (t->wrong)
        report_check(r, name, 0, "%zu of %zu %s; the first: element %zu%s%s", t->wrong,
                     t->checked, what, t->first_wrong, t->first_where ? " in " : "",
                     t->first_where ? t->first_where : "");
    else
        report_check(r, name, t->checked > 0, "%zu of %zu %s", t->wrong, t->checked, what);
}

/* A verdict's numbers as they print: a "%" verdict's fractions as percentages. */
static double unit_scale(const verdict *v) { return strcmp(v->unit, "%") == 0 ? 100 : 1; }

/* A limit as the verdict line prints it: "at least 90%", "-2% to 2%", "exactly 0 launches". */
static char *limit_text(const verdict *v)
{
    int percent = strcmp(v->unit, "%") == 0, ratio = strcmp(v->unit, "x") == 0;
    double k = unit_scale(v);
    char lo[32], hi[32], *s = NULL;
    const char *space = percent || ratio ? "" : " ", *unit = ratio ? "x" : v->unit;
    snprintf(lo, sizeof lo, "%g", v->min * k); /* declared constants: printed as written */
    snprintf(hi, sizeof hi, "%g", v->max * k);
    int ok = isinf(v->max)       ? asprintf(&s, "at least %s%s%s", lo, space, unit)
             : isinf(v->min)     ? asprintf(&s, "at most %s%s%s", hi, space, unit)
             : v->min == v->max  ? asprintf(&s, "exactly %s%s%s", lo, space, unit)
                                 : asprintf(&s, "%s%s%s to %s%s%s", lo, space, unit, hi, space, unit);
    if (ok < 0)
        fail_cannot_run("out of host memory in the report");
    return s;
}

int verdict_holds(const verdict *v, double value)
{
    return value >= v->min && value <= v->max; /* NaN: not observed */
}

/* A verdict's number in CSV: the row "verdict,NAME_WHAT,value,unit". */
static void verdict_row(const report *r, const char *name, const char *what, double value,
                        const char *unit)
{
    char metric[96];
    snprintf(metric, sizeof metric, "%s_%s", name, what);
    csv_row(r, "verdict", metric, value, unit);
}

int report_verdict(report *r, const verdict *v, double value, const char *fmt, ...)
{
    int observed = verdict_holds(v, value);
    va_list ap;
    va_start(ap, fmt);
    entry *it = add_item(r, &r->verdicts, "verdict", v->name, observed, fmt, ap);
    va_end(ap);
    double k = unit_scale(v);
    it->v = v;
    it->value = value * k; /* as the limit prints */
    it->limit = limit_text(v);
    if (r->format == FORMAT_CSV) {
        /* the value, then the limits it was held to, in the value's scale:
         * make stress reads how far each run's value lay from them */
        verdict_row(r, v->name, "value", it->value, v->unit);
        if (isfinite(v->min))
            verdict_row(r, v->name, "min", v->min * k, v->unit);
        if (isfinite(v->max))
            verdict_row(r, v->name, "max", v->max * k, v->unit);
    } else if (r->format == FORMAT_TEXT) {
        /* The limits come from untraced runs: a traced verdict says what it judged. */
        printf("  observed: %-3s %s: %s (limit: %s%s)\n", observed ? "yes" : "NO", v->name,
               it->text, it->limit,
               r->traced && v != &GPU_NOT_SHARED ? "; judged on a traced run" : "");
    }
    return observed;
}

static int all_ok(const list *l)
{
    const entry *items = l->items;
    for (int i = 0; i < l->n; i++)
        if (!items[i].ok)
            return 0;
    return 1;
}

static void free_entries(list *l)
{
    entry *e = l->items;
    for (int i = 0; i < l->n; i++) {
        free(e[i].variant);
        free(e[i].metric);
        free(e[i].unit);
        free(e[i].text);
        free(e[i].limit);
    }
    free(e);
}

/* The verdict whose hint leads: the GPU's sharing, else the first not observed. */
static const entry *first_not_observed(const report *r)
{
    const entry *items = r->verdicts.items, *first = NULL;
    for (int i = 0; i < r->verdicts.n; i++)
        if (!items[i].ok && (!first || items[i].v == &GPU_NOT_SHARED))
            first = &items[i];
    return first;
}

/* What was re-measured, and what interference the run saw. */
static void json_interference(const report *r)
{
    const entry *e = r->interference.items;
    json_key("interference");
    putchar('[');
    for (int i = 0; i < r->interference.n; i++) {
        printf("%s\n    {", i ? "," : "");
        json_key("what"), json_string(e[i].variant), putchar(',');
        json_key("attempts"), json_number(e[i].value), putchar(',');
        json_key("observed_after"), fputs(e[i].ok ? "true" : "false", stdout), putchar(',');
        json_key("seen"), json_string(e[i].text), putchar('}');
    }
    fputs(r->interference.n ? "\n  ]" : "]", stdout);
}

/* What the exit code means for this run. Exit 0 with no verdict judged (an
 * exercise's --check pass, which runs small sizes under compute-sanitizer)
 * says so, rather than claim an effect nobody measured. */
static const char *result_meaning(const report *r, int code)
{
    if (code == EXIT_OK && r->verdicts.n == 0)
        return "results correct, no effect judged in this run";
    return exit_code_meaning(code);
}

static void print_json(const report *r, int code)
{
    const entry *params = r->params.items;
    printf("{\n  ");
    json_key("lab"), json_string(r->prog->name), printf(",\n  ");
    json_key("title"), json_string(r->prog->title), printf(",\n  ");
    if (r->has_device)
        json_device(&r->device), printf(",\n  ");
    json_key("parameters");
    putchar('{');
    for (int i = 0; i < r->params.n; i++) {
        printf("%s", i ? "," : "");
        json_key(params[i].metric);
        printf("{\"value\":");
        json_number(params[i].value);
        printf(",\"unit\":");
        json_string(params[i].unit);
        putchar('}');
    }
    printf("},\n  ");
    json_rows("measurements", &r->measurements), printf(",\n  ");
    json_rows("predictions", &r->predictions), printf(",\n  ");
    json_items("checks", "passed", &r->checks), printf(",\n  ");
    json_interference(r), printf(",\n  ");
    json_key("verdict");
    const entry *first = first_not_observed(r);
    printf("{\"observed\":%s,", first ? "false" : "true");
    /* The likely reason is for an effect not observed, as in the text. */
    json_key("hint");
    if (first)
        json_string(first->v->hint);
    else
        fputs("null", stdout);
    printf(",\n  ");
    json_items("items", "observed", &r->verdicts);
    printf("},\n  ");
    json_key("exit_code"), printf("%d,\n  ", code);
    json_key("exit_meaning"), json_string(result_meaning(r, code));
    printf("\n}\n");
}

/* "the driver lists 2 other processes holding this GPU" and the like. */
static const char *processes_text(char *buf, size_t size, int n)
{
    if (n < 0)
        snprintf(buf, size, "the driver does not list the processes here");
    else
        snprintf(buf, size, "the driver lists %d other process%s holding this GPU", n,
                 n == 1 ? "" : "es");
    return buf;
}

/* A lab's timings are its own only if nothing else ran on the GPU meanwhile. */
void report_sharing(report *r, const gpu_sharing *start, const gpu_sharing *end)
{
    char listed[96];
    r->others_listed = start->other_processes > end->other_processes ? start->other_processes
                                                                      : end->other_processes;
    if (!gpu_was_shared(start) && !gpu_was_shared(end))
        return;
    double at_start = start->probe_ms > 0 ? start->lost_ms / start->probe_ms : 0;
    double at_end = end->probe_ms > 0 ? end->lost_ms / end->probe_ms : 0;
    report_section(r, "Was the GPU this program's alone?");
    report_verdict(r, &GPU_NOT_SHARED, at_start > at_end ? at_start : at_end,
                   "the GPU ran other work for %.1f of %.1f ms around a probe kernel at the "
                   "start and %.1f of %.1f ms at the end (and at least %.0f ms); %s",
                   start->lost_ms, start->probe_ms, end->lost_ms, end->probe_ms, SHARED_MS_MIN,
                   processes_text(listed, sizeof listed, r->others_listed));
}

void report_attempts(report *r, const char *what, int attempts, int seen, const char *why)
{
    add_row(&r->measurements, what, "attempts", attempts, "count");
    if (r->format == FORMAT_CSV)
        csv_row(r, what, "attempts", attempts, "count");
    if (!why || !*why)
        return;
    entry *e = add_row(&r->interference, what, "interference", attempts, "count");
    e->text = copy(why);
    e->ok = seen;
    if (r->format == FORMAT_TEXT)
        printf("  %s: measured %d time%s; %s; %s\n", what, attempts, attempts == 1 ? "" : "s",
               why, seen ? "the last attempt showed the effect" : "none showed the effect");
}

static void machine_rows(report *r, const char *when, const machine_state *m)
{
    static const char *const metric[] = {"link_H2D", "link_D2H", "host_memcpy", "launch",
                                         "sm_clock"};
    static const char *const unit[] = {"GB/s", "GB/s", "GB/s", "us", "MHz"};
    const double value[] = {m->link_gbps[0], m->link_gbps[1], m->host_gbps, m->launch_us,
                            m->sm_mhz};
    for (int i = 0; i < 5; i++) {
        add_row(&r->measurements, when, metric[i], value[i], unit[i]);
        if (r->format == FORMAT_CSV)
            csv_row(r, when, metric[i], value[i], unit[i]);
    }
    if (r->format == FORMAT_TEXT)
        printf("  %-17s link %.1f GB/s H2D, %.1f D2H; host memcpy %.1f GB/s; an empty kernel "
               "%.1f us; SM clock %.0f MHz\n", when, m->link_gbps[0], m->link_gbps[1],
               m->host_gbps, m->launch_us, m->sm_mhz);
}

void report_machine(report *r, const machine_state *start, const machine_state *end,
                    double max_mhz)
{
    char why[512];
    double raw = r->has_device ? pcie_raw_gbps(r->device.pcie_gen, r->device.pcie_width) : 0;
    report_section(r, "The machine, probed at the start and at the end");
    machine_rows(r, "machine at start", start);
    machine_rows(r, "machine at end", end);
    /* Time slicing is report_sharing()'s verdict, with its own likely reason:
     * here only what that verdict does not say. */
    machine_state a = *start, b = *end;
    a.sharing.probe_ms = b.sharing.probe_ms = 0;
    if (!machine_interference(&a, &b, raw, max_mhz, why, sizeof why))
        return;
    entry *e = add_row(&r->interference, "the run", "interference", 0, "count");
    e->text = copy(why);
    if (r->format == FORMAT_TEXT)
        printf("  between the two: %s\n", why);
}

/* Prints "likely reason for NAME: HINT" for each verdict not observed, the
 * GPU's sharing first (when it was shared, that is the most likely reason),
 * then what else the report knows of the machine that could explain it. */
static void print_hints(const report *r)
{
    const entry *items = r->verdicts.items, *lead = first_not_observed(r);
    const entry *seen = r->interference.items;
    /* Tracing first: it is this run's own doing, and the likeliest cause of a
     * timing that just misses its limit (lab04's 89% against 90%, traced). */
    if (r->traced && lead->v != &GPU_NOT_SHARED)
        printf("likely reason for %s: this run was traced (--trace/--timeline), so CUPTI's "
               "overhead is in its timings, and the limits are for untraced runs: run it again "
               "without tracing before trusting the reasons below\n", lead->metric);
    for (int i = 0; i < r->interference.n; i++) /* what the run saw of other processes */
        if (!seen[i].ok)
            printf("likely reason for %s: the machine, not the lesson: %s\n", seen[i].variant,
                   seen[i].text);
    printf("likely reason for %s: %s\n", lead->metric, lead->v->hint);
    for (int i = 0; i < r->verdicts.n; i++) {
        int told = &items[i] == lead || strcmp(items[i].v->hint, lead->v->hint) == 0;
        for (int j = 0; j < i && !told; j++) /* a hint two verdicts share is printed once */
            told = !items[j].ok && strcmp(items[j].v->hint, items[i].v->hint) == 0;
        if (!items[i].ok && !told)
            printf("likely reason for %s: %s\n", items[i].metric, items[i].v->hint);
    }
    if (lead->v != &GPU_NOT_SHARED && r->others_listed > 0) {
        char listed[96];
        printf("note: %s (see nvidia-smi): if they were working during the run, they took "
               "part of the GPU\n", processes_text(listed, sizeof listed, r->others_listed));
    }
    if (r->has_device && r->device.launch_blocking)
        printf("note: CUDA_LAUNCH_BLOCKING=1 is set: every launch returns only when its "
               "kernel has finished, so nothing overlaps and no host call returns early\n");
}

void report_cannot_show(report *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    free(r->cannot_show);
    r->cannot_show = vformat(fmt, ap);
    va_end(ap);
}

int report_finish(report *r)
{
    int code = !all_ok(&r->checks)     ? EXIT_WRONG_RESULTS
               : r->cannot_show        ? EXIT_CANNOT_RUN
               : !all_ok(&r->verdicts) ? EXIT_NOT_OBSERVED
                                       : EXIT_OK;
    if (r->format == FORMAT_JSON) {
        print_json(r, code);
    } else if (r->format == FORMAT_CSV) {
        csv_row(r, "result", "exit_code", code, "code");
    } else {
        printf("\nresult: %s (exit %d)\n", result_meaning(r, code), code);
        /* Exit 3 outranks 4 (what could not run here is the news), but a
         * verdict that was judged and missed before it still gets its hints:
         * lab14 on one GPU judges parts 1 and 2 before part 3 cannot run. */
        if (code == EXIT_NOT_OBSERVED || (code == EXIT_CANNOT_RUN && !all_ok(&r->verdicts)))
            print_hints(r);
    }
    fflush(stdout);
    if (code == EXIT_CANNOT_RUN) /* the one line every exit 3 gives, on stderr */
        fprintf(stderr, "%s: cannot run here: %s\n", program_name, r->cannot_show);
    free(r->cannot_show);
    free_entries(&r->params);
    free_entries(&r->measurements);
    free_entries(&r->predictions);
    free_entries(&r->checks);
    free_entries(&r->verdicts);
    free_entries(&r->interference);
    free(r);
    return code;
}
