/* The exit codes every streamlab program uses (shared/DESIGN.md).
 * One place for this fact: the README's table and the tests read these. */
#ifndef STREAMLAB_EXITCODES_H
#define STREAMLAB_EXITCODES_H

enum exit_code {
    EXIT_OK = 0,            /* results correct and the effect observed */
    EXIT_WRONG_RESULTS = 1, /* results wrong: a bug, or a race shown on purpose in strict mode */
    EXIT_USAGE = 2,         /* bad command line */
    EXIT_CANNOT_RUN = 3,    /* no GPU or driver, or a feature this GPU lacks */
    EXIT_NOT_OBSERVED = 4,  /* results correct, but the expected effect was not seen */
};

/* A short phrase for each code, printed at the end of a run. */
const char *exit_code_meaning(int code);

#endif
