/* Counting verified results; see tally.h. */
#include "tally.h"

void tally_add(tally *t, size_t n, size_t wrong, size_t first)
{
    if (!t)
        return;
    if (wrong && !t->wrong) {
        t->first_wrong = first;
        t->first_where = t->where;
    }
    t->checked += n;
    t->wrong += wrong;
}
