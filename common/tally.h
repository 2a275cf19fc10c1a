/* Counting verified results: how many were checked, how many were wrong, and
 * which was the first wrong one. One type for every program's checks; the
 * verifiers in kernels.h add to it and report_tally() prints it. */
#ifndef STREAMLAB_TALLY_H
#define STREAMLAB_TALLY_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    size_t checked, wrong;
    size_t first_wrong;      /* the first wrong result's index in the batch it was in */
    const char *where;       /* set by the caller: what is being checked now ("serial") */
    const char *first_where; /* `where` when the first wrong result was found */
} tally;

/* Adds a batch of n results, `wrong` of them wrong, the first at index
 * `first`. A NULL tally counts nothing (a caller that wants only the count). */
void tally_add(tally *t, size_t n, size_t wrong, size_t first);

#ifdef __cplusplus
}
#endif
#endif
