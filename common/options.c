/* Option parsing; see options.h.
 *
 * A small hand-written parser instead of getopt_long: it accepts exactly
 * "--name value" and "--name=value", never abbreviations, and every message
 * names the option and the range it accepts. */
#include "options.h"
#include "check.h"
#include "exitcodes.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int help_requested, dry_run;

enum { N_COMMON = 10 };

static void table_of_common(option *t, common_options *c, const program_info *prog)
{
    const option common[N_COMMON] = {
        {"help", OPT_FLAG, &help_requested, 0, 0, NO_QUICK, NULL, "show this help and exit"},
        {"device", OPT_INT, &c->device, 0, 63, NO_QUICK, "N", "GPU to use, counted from 0"},
        {"quick", OPT_FLAG, &c->quick, 0, 0, NO_QUICK, NULL,
         "small sizes, under a second (tests, sanitizers): the --quick values below"},
        {"reps", OPT_INT, &c->reps, 1, REPS_MAX, prog->quick_reps ? prog->quick_reps : NO_QUICK,
         "N", "timed repetitions of each measurement"},
        {"retries", OPT_INT, &c->retries, 0, RETRIES_MAX, NO_QUICK, "N",
         "when another process's work spoils a comparison, measure it again up to N times"},
        {"csv", OPT_FLAG, &c->csv, 0, 0, NO_QUICK, NULL, "print rows lab,variant,metric,value,unit"},
        {"json", OPT_FLAG, &c->json, 0, 0, NO_QUICK, NULL, "print one JSON document"},
        {"trace", OPT_STRING, &c->trace, 0, 0, NO_QUICK, "FILE",
         "record a timeline into FILE: a .json name for Perfetto, .tsv for raw records"},
        {"timeline", OPT_FLAG, &c->timeline, 0, 0, NO_QUICK, NULL,
         "draw the run's timeline in the terminal"},
        {"dry-run", OPT_FLAG, &dry_run, 0, 0, NO_QUICK, NULL,
         "print the settings this run would use, then exit without touching the GPU"},
    };
    memcpy(t, common, sizeof common);
}

static int count_options(const option *t)
{
    int n = 0;
    while (t && t[n].name)
        n++;
    return n;
}

static int is_number(const option *o) { return o->kind == OPT_INT || o->kind == OPT_DOUBLE; }

static double number_in(const option *o)
{
    return o->kind == OPT_INT ? *(int *)o->value : *(double *)o->value;
}

static void print_number(double v, enum option_kind kind)
{
    if (kind == OPT_INT)
        printf("%.0f", v);
    else
        printf("%g", v);
}

/* Both tables in one loop: the common options, then the program's. */
static const option *nth(const option *common, const program_info *prog, int i)
{
    return i < N_COMMON ? &common[i] : &prog->options[i - N_COMMON];
}

static void print_help(const program_info *prog, const option *common)
{
    int n = N_COMMON + count_options(prog->options);
    printf("usage: %s [options]\n%s\n\noptions:\n", prog->name, prog->title);
    for (int i = 0; i < n; i++) {
        const option *o = nth(common, prog, i);
        char left[64];
        snprintf(left, sizeof left, "%s--%s%s%s", o->value == &help_requested ? "-h, " : "",
                 o->name, o->arg ? " " : "", o->arg ? o->arg : "");
        printf("  %-22s %s", left, o->help);
        if (is_number(o)) {
            printf(" (");
            print_number(o->min, o->kind);
            printf(" to ");
            print_number(o->max, o->kind);
            printf("; default ");
            print_number(number_in(o), o->kind);
            if (!isnan(o->quick)) {
                printf(", --quick ");
                print_number(o->quick, o->kind);
            }
            printf(")");
        }
        printf("\n");
    }
    printf("\nexit codes:\n");
    for (int code = EXIT_OK; code <= EXIT_NOT_OBSERVED; code++)
        printf("  %d  %s\n", code, exit_code_meaning(code));
}

/* One line per setting, "--name value", in the order of --help. */
static void print_settings(const program_info *prog, const option *common)
{
    int n = N_COMMON + count_options(prog->options);
    printf("%s would run with:\n", prog->name);
    for (int i = 0; i < n; i++) {
        const option *o = nth(common, prog, i);
        if (o->value == &help_requested || o->value == &dry_run)
            continue;
        printf("  --%s ", o->name);
        if (is_number(o))
            print_number(number_in(o), o->kind);
        else if (o->kind == OPT_FLAG)
            printf("%s", *(int *)o->value ? "on" : "off");
        else
            printf("%s", *(const char **)o->value ? *(const char **)o->value : "(none)");
        printf("\n");
    }
}

static void fail_range(const option *o, const char *text)
{
    if (o->kind == OPT_INT)
        fail_usage("--%s must be an integer from %.0f to %.0f (got '%s')", o->name, o->min,
                   o->max, text);
    fail_usage("--%s must be a number from %g to %g (got '%s')", o->name, o->min, o->max, text);
}

/* 1 when text is a plain decimal number: an optional sign, digits, and for a
 * real number a decimal point and an exponent. strtoll and strtod accept
 * more (leading spaces, hexadecimal, "infinity"), which on a command line is
 * more often a typing mistake than a wish. */
static int plain_number(const char *text, int integer)
{
    const char *c = text;
    int digits = 0;
    if (*c == '+' || *c == '-')
        c++;
    for (; *c >= '0' && *c <= '9'; c++)
        digits++;
    if (!integer && *c == '.')
        for (c++; *c >= '0' && *c <= '9'; c++)
            digits++;
    if (!integer && digits && (*c == 'e' || *c == 'E')) {
        c++;
        if (*c == '+' || *c == '-')
            c++;
        if (!(*c >= '0' && *c <= '9'))
            return 0;
        while (*c >= '0' && *c <= '9')
            c++;
    }
    return digits > 0 && *c == '\0';
}

static void set_number(const option *o, double v)
{
    if (o->kind == OPT_INT)
        *(int *)o->value = (int)v;
    else
        *(double *)o->value = v;
}

/* Converts text to the option's kind, or exits naming the option. */
static void store_number(const option *o, const char *text)
{
    char *end;
    errno = 0;
    double v;
    if (!plain_number(text, o->kind == OPT_INT))
        fail_range(o, text);
    if (o->kind == OPT_INT) {
        long long n = strtoll(text, &end, 10);
        v = (double)n;
    } else {
        v = strtod(text, &end);
        if (!isfinite(v))
            fail_range(o, text);
    }
    if (end == text || *end != '\0' || errno == ERANGE || v < o->min || v > o->max)
        fail_range(o, text);
    set_number(o, v);
}

/* The index of --name in both tables, or -1. */
static int find(const char *name, size_t len, const option *common, const program_info *prog)
{
    int n = N_COMMON + count_options(prog->options);
    for (int i = 0; i < n; i++) {
        const char *candidate = nth(common, prog, i)->name;
        if (strlen(candidate) == len && strncmp(candidate, name, len) == 0)
            return i;
    }
    return -1;
}

void options_parse(int argc, char **argv, const program_info *prog, common_options *c)
{
    option common[N_COMMON];
    int n = N_COMMON + count_options(prog->options);
    char *given = xmalloc((size_t)n);
    memset(given, 0, (size_t)n);
    program_name = prog->name;
    memset(c, 0, sizeof *c);
    c->reps = prog->reps;
    c->retries = RETRIES_DEFAULT;
    table_of_common(common, c, prog);

    /* --help (or -h, the one short option: what people type first) wins
     * over any mistake beside it: someone asking for help is usually in the
     * middle of getting the rest wrong. */
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            print_help(prog, common);
            exit(EXIT_OK);
        }

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strncmp(a, "--", 2) != 0 || a[2] == '\0')
            fail_usage("unexpected argument '%s' (options start with --; see --help)", a);
        const char *name = a + 2;
        const char *eq = strchr(name, '=');
        size_t len = eq ? (size_t)(eq - name) : strlen(name);
        int k = find(name, len, common, prog);
        if (k < 0)
            fail_usage("unknown option '%.*s' (see --help)", (int)(len + 2), a);
        const option *o = nth(common, prog, k);
        given[k] = 1;
        if (o->kind == OPT_FLAG) {
            if (eq)
                fail_usage("--%s takes no value (got '%s')", o->name, eq + 1);
            *(int *)o->value = 1;
            continue;
        }
        const char *text = eq ? eq + 1 : (i + 1 < argc ? argv[i + 1] : NULL);
        if (!eq && text && strncmp(text, "--", 2) == 0)
            text = NULL; /* "--reps --csv": the value was forgotten */
        if (!eq && text)
            i++;
        if (!text)
            fail_usage("--%s needs a value: %s", o->name, o->arg ? o->arg : "a number");
        if (o->kind == OPT_STRING)
            *(const char **)o->value = text;
        else
            store_number(o, text);
    }
    if (c->csv && c->json)
        fail_usage("--csv and --json cannot be used together: choose one output format");
    /* --quick changes defaults, never a value the user chose. */
    for (int i = 0; c->quick && i < n; i++) {
        const option *o = nth(common, prog, i);
        if (!given[i] && is_number(o) && !isnan(o->quick))
            set_number(o, o->quick);
    }
    free(given);
    if (prog->override_options)
        prog->override_options(c);
    if (prog->check_options)
        prog->check_options();
    if (dry_run) {
        print_settings(prog, common);
        exit(EXIT_OK);
    }
}

double option_value(const option *o)
{
    return is_number(o) ? number_in(o) : o->kind == OPT_FLAG ? *(int *)o->value : NAN;
}

double option_number(const program_info *prog, const char *name, const option **o)
{
    int n = count_options(prog->options);
    for (int i = 0; i < n; i++)
        if (strcmp(prog->options[i].name, name) == 0 && is_number(&prog->options[i])) {
            *o = &prog->options[i];
            return number_in(*o);
        }
    fail_wrong("%s has no numeric option --%s", prog->name, name);
}
