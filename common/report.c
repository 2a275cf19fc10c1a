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

typedef struct {
    char *variant, *metric, *unit;
    double value;
    int has_stats;
    stats s;
} row;

typedef struct {
    char *name, *detail;
    int ok;
} item;

typedef struct {
    void *items;
    int n;
} list;

struct report {
    const program_info *prog;
    enum format format;
    int has_device;
    device_info device;
    list params, measurements, predictions; /* of row */
    list checks, verdicts;                  /* of item */
    char *hint;
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

static void csv_row(const report *r, const char *variant, const char *metric, double value,
                    const char *unit)
{
    csv_field(r->prog->name);
    putchar(',');
    csv_field(variant);
    putchar(',');
    csv_field(metric);
    printf(",%.10g,", value);
    csv_field(unit);
    putchar('\n');
}

static void csv_text_row(const report *r, const char *variant, const char *metric,
                         const char *text)
{
    csv_field(r->prog->name);
    putchar(',');
    csv_field(variant);
    putchar(',');
    csv_field(metric);
    putchar(',');
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
    const row *rows = l->items;
    json_key(key);
    putchar('[');
    for (int i = 0; i < l->n; i++) {
        const row *w = &rows[i];
        printf("%s\n    {", i ? "," : "");
        json_key("variant"), json_string(w->variant), putchar(',');
        json_key("metric"), json_string(w->metric), putchar(',');
        json_key("value"), json_number(w->value), putchar(',');
        json_key("unit"), json_string(w->unit);
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
    const item *items = l->items;
    json_key(key);
    putchar('[');
    for (int i = 0; i < l->n; i++) {
        printf("%s\n    {", i ? "," : "");
        json_key("name"), json_string(items[i].name), putchar(',');
        json_key(okname), fputs(items[i].ok ? "true" : "false", stdout), putchar(',');
        json_key("detail"), json_string(items[i].detail), putchar('}');
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

/* ---- the calls a lab makes ---- */

report *report_begin(const program_info *prog, const common_options *opt, const device_info *d)
{
    report *r = xmalloc(sizeof *r);
    memset(r, 0, sizeof *r);
    r->prog = prog;
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
    /* CUPTI adds work to every launch and copy: a traced timing is not the
     * timing the lab would report without it, and the report says so. */
    report_param(r, "tracing", opt->trace || opt->timeline, "bool");
    if (r->format == FORMAT_TEXT && (opt->trace || opt->timeline))
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

static row *add_row(list *l, const char *variant, const char *metric, double value,
                    const char *unit)
{
    row *w = push(l, sizeof *w);
    w->variant = copy(variant);
    w->metric = copy(metric);
    w->unit = copy(unit);
    w->value = value;
    return w;
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
    row *w = add_row(&r->measurements, variant, metric, s->median, unit);
    w->has_stats = 1;
    w->s = *s;
    if (r->format == FORMAT_CSV)
        csv_stats(r, variant, metric, s, unit);
    else if (r->format == FORMAT_TEXT)
        printf("  %-22s %-17s %10s %-6s (p5 %s, p95 %s, n=%d)\n", variant, metric,
               format_value(m, sizeof m, s->median), unit, format_value(lo, sizeof lo, s->p5),
               format_value(hi, sizeof hi, s->p95), s->n);
}

void report_compare(report *r, const char *variant, const char *metric, double predicted,
                    const stats *measured, const char *unit)
{
    char p[32], m[32], lo[32], hi[32];
    char pmetric[128];
    snprintf(pmetric, sizeof pmetric, "predicted_%s", metric);
    add_row(&r->predictions, variant, metric, predicted, unit);
    row *w = add_row(&r->measurements, variant, metric, measured->median, unit);
    w->has_stats = 1;
    w->s = *measured;
    if (r->format == FORMAT_CSV) {
        csv_row(r, variant, pmetric, predicted, unit);
        csv_stats(r, variant, metric, measured, unit);
    } else if (r->format == FORMAT_TEXT) {
        printf("  %-22s %-17s predicted %9s  measured %9s %-6s x%.2f  (p5 %s, p95 %s)\n",
               variant, metric, format_value(p, sizeof p, predicted),
               format_value(m, sizeof m, measured->median), unit,
               predicted != 0 ? measured->median / predicted : NAN,
               format_value(lo, sizeof lo, measured->p5), format_value(hi, sizeof hi, measured->p95));
    }
}

static void add_item(report *r, list *l, const char *kind, const char *name, int ok,
                     const char *fmt, va_list ap)
{
    item *it = push(l, sizeof *it);
    it->name = copy(name);
    it->ok = ok;
    it->detail = vformat(fmt, ap);
    if (r->format == FORMAT_CSV)
        csv_row(r, kind, name, ok, kind[0] == 'c' ? "pass" : "observed");
    else if (r->format == FORMAT_TEXT && kind[0] == 'c')
        printf("  %-6s %s: %s\n", ok ? "[ok]" : "[FAIL]", name, it->detail);
    else if (r->format == FORMAT_TEXT)
        printf("  observed: %-3s %s: %s\n", ok ? "yes" : "NO", name, it->detail);
}

void report_check(report *r, const char *name, int passed, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    add_item(r, &r->checks, "check", name, passed, fmt, ap);
    va_end(ap);
}

void report_verdict(report *r, const char *name, int observed, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    add_item(r, &r->verdicts, "verdict", name, observed, fmt, ap);
    va_end(ap);
}

void report_hint(report *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    free(r->hint);
    r->hint = vformat(fmt, ap);
    va_end(ap);
}

static int all_ok(const list *l)
{
    const item *items = l->items;
    for (int i = 0; i < l->n; i++)
        if (!items[i].ok)
            return 0;
    return 1;
}

static void free_rows(list *l)
{
    row *rows = l->items;
    for (int i = 0; i < l->n; i++) {
        free(rows[i].variant);
        free(rows[i].metric);
        free(rows[i].unit);
    }
    free(rows);
}

static void free_items(list *l)
{
    item *items = l->items;
    for (int i = 0; i < l->n; i++) {
        free(items[i].name);
        free(items[i].detail);
    }
    free(items);
}

static void print_json(const report *r, int code)
{
    const row *params = r->params.items;
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
    json_key("verdict");
    int observed = all_ok(&r->verdicts);
    printf("{\"observed\":%s,", observed ? "true" : "false");
    /* The likely reason is for an effect not observed, as in the text. */
    json_key("hint");
    if (r->hint && !observed)
        json_string(r->hint);
    else
        fputs("null", stdout);
    printf(",\n  ");
    json_items("items", "observed", &r->verdicts);
    printf("},\n  ");
    json_key("exit_code"), printf("%d,\n  ", code);
    json_key("exit_meaning"), json_string(exit_code_meaning(code));
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

/* A lab's timings are its own only if nothing else ran on the GPU meanwhile.
 * The GPU was probed as the program started (device_select) and is probed
 * again now. Shared at either moment: a "no" verdict of its own, so the run
 * ends with EXIT_NOT_OBSERVED and this reason, never with an "observed" that
 * another process's work may have made or marred. Not shared, but the driver
 * lists other processes and some verdict is "no": they lead the likely reasons. */
static void judge_sharing(report *r)
{
    if (!r->has_device)
        return;
    const gpu_sharing *start = &r->device.sharing;
    gpu_sharing end;
    device_sharing_now(&end);
    int others = start->other_processes > end.other_processes ? start->other_processes
                                                               : end.other_processes;
    char listed[96];
    processes_text(listed, sizeof listed, others);
    char *lab_hint = r->hint;
    r->hint = NULL;
    if (gpu_was_shared(start) || gpu_was_shared(&end)) {
        report_section(r, "Was the GPU this program's alone?");
        report_verdict(r, "gpu_not_shared", 0, "the GPU ran other work for %.1f of %.1f ms "
                       "around a probe kernel at the start and %.1f of %.1f ms at the end "
                       "(limit: under %.0f%% and %.0f ms); %s", start->lost_ms, start->probe_ms,
                       end.lost_ms, end.probe_ms, SHARED_FRACTION_MIN * 100, SHARED_MS_MIN,
                       listed);
        report_hint(r, "another process was using this GPU (%s; see nvidia-smi): the GPU "
                    "takes turns between processes, so this run's timings are not its own. "
                    "Run it again when the GPU is idle%s%s", listed,
                    lab_hint ? ". If it was idle: " : "", lab_hint ? lab_hint : "");
    } else if (others > 0 && !all_ok(&r->verdicts)) {
        report_hint(r, "%s (see nvidia-smi): if they were working during the run, they took "
                    "part of the GPU%s%s", listed, lab_hint ? ". Otherwise: " : "",
                    lab_hint ? lab_hint : "");
    } else if (lab_hint) {
        report_hint(r, "%s", lab_hint);
    }
    free(lab_hint);
}

int report_finish(report *r)
{
    judge_sharing(r);
    int code = !all_ok(&r->checks)     ? EXIT_WRONG_RESULTS
               : !all_ok(&r->verdicts) ? EXIT_NOT_OBSERVED
                                       : EXIT_OK;
    if (r->format == FORMAT_JSON) {
        print_json(r, code);
    } else if (r->format == FORMAT_CSV) {
        csv_row(r, "result", "exit_code", code, "code");
    } else {
        printf("\nresult: %s (exit %d)\n", exit_code_meaning(code), code);
        if (code == EXIT_NOT_OBSERVED && r->hint)
            printf("likely reason: %s\n", r->hint);
    }
    fflush(stdout);
    free_rows(&r->params);
    free_rows(&r->measurements);
    free_rows(&r->predictions);
    free_items(&r->checks);
    free_items(&r->verdicts);
    free(r->hint);
    free(r);
    return code;
}
