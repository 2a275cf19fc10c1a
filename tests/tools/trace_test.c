/* Reads raw trace records (what --trace FILE.tsv writes) and shows them the
 * way a lab would, so the writers are tested on recorded runs without a GPU.
 *
 *   trace_test chrome RECORDS    Chrome Trace Event JSON on stdout
 *   trace_test text RECORDS [W]  the text timeline, W columns wide (default 120)
 *   trace_test overlap RECORDS   each span's overlap, one "name<TAB>percent" a line
 *   trace_test records RECORDS   the records written again, as --trace FILE.tsv would */
#include "trace.h"

#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: trace_test chrome|text|overlap|records RECORDS [WIDTH]\n");
        return 2;
    }
    FILE *in = fopen(argv[2], "r");
    if (!in) {
        perror(argv[2]);
        return 2;
    }
    trace t;
    int bad = 0;
    if (trace_read_records(&t, in, &bad) != 0) {
        fprintf(stderr, "trace_test: %s:%d: not a trace record\n", argv[2], bad);
        return 1;
    }
    fclose(in);
    if (strcmp(argv[1], "chrome") == 0)
        trace_write_chrome(&t, "fixture", stdout);
    else if (strcmp(argv[1], "records") == 0)
        trace_write_records(&t, stdout);
    else if (strcmp(argv[1], "text") == 0)
        trace_draw_text(&t, argc > 3 ? atoi(argv[3]) : 120, stdout);
    else
        for (int i = 0; i < t.n_spans; i++)
            printf("%s\t%.1f\n", t.spans[i].name,
                   100 * trace_overlap(&t, t.spans[i].start, t.spans[i].end));
    trace_free(&t);
    return 0;
}
