/* The two JSON primitives the report and the trace writer share. */
#ifndef STREAMLAB_JSON_H
#define STREAMLAB_JSON_H

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A string with quotes and RFC 8259 escapes. */
void json_write_string(FILE *out, const char *s);
/* A number; NaN and infinities, which JSON cannot hold, become null. */
void json_write_number(FILE *out, double v);

#ifdef __cplusplus
}
#endif
#endif
