/* Command-line options: one table per program, --help generated from it.
 *
 * Every program accepts the common options (--help, --device, --quick,
 * --reps, --csv, --json) and lists its own in a table of `option`. Numbers
 * are range-checked here, so a lab never sees a value it did not allow. */
#ifndef STREAMLAB_OPTIONS_H
#define STREAMLAB_OPTIONS_H

#ifdef __cplusplus
extern "C" {
#endif

enum option_kind {
    OPT_FLAG,   /* no value; sets an int to 1 */
    OPT_INT,    /* an integer in [min, max], stored in an int */
    OPT_DOUBLE, /* a finite number in [min, max], stored in a double */
    OPT_STRING, /* any text, stored as a const char * into argv */
};

typedef struct {
    const char *name;      /* long name without the leading "--" */
    enum option_kind kind;
    void *value;           /* int * for OPT_FLAG and OPT_INT, double * for OPT_DOUBLE,
                              const char ** for OPT_STRING;
                              the value it holds before parsing is the default */
    double min, max;       /* accepted range of a number, inclusive */
    const char *arg;       /* the value's name in --help, e.g. "MS" */
    const char *help;      /* one line */
} option;

typedef struct {
    const char *name;         /* "lab00": used in messages and in the report */
    const char *title;        /* one line: what the program shows */
    const option *options;    /* the program's own options; may be NULL */
    int n_options;
    int default_reps;         /* --reps when not given */
} program_info;

typedef struct {
    int device; /* --device N */
    int quick;  /* --quick: small sizes, under a second */
    int reps;   /* --reps N: timed repetitions per measurement */
    int csv;    /* --csv */
    int json;   /* --json */
    const char *trace; /* --trace FILE: .json (Chrome trace) or .tsv (raw records) */
    int timeline;      /* --timeline: draw the run in the terminal */
} common_options;

#define REPS_MAX 10000

/* Parses argv into *common and the program's table. Prints help and exits 0
 * on --help; prints one line naming the option and exits EXIT_USAGE on any
 * mistake. Sets program_name. */
void options_parse(int argc, char **argv, const program_info *prog, common_options *common);

/* 1 when argv holds --name as given ("--reps"), alone or as --name=value:
 * lets --quick shrink a default without overriding a value the user typed. */
int option_given(int argc, char **argv, const char *name);

#ifdef __cplusplus
}
#endif
#endif
