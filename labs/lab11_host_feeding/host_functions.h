/* lab11's part 2: host functions (cudaLaunchHostFunc). host_functions.cu
 * measures and reports them; lab11.cu calls this after its loaders. */
#ifndef LAB11_HOST_FUNCTIONS_H
#define LAB11_HOST_FUNCTIONS_H

#include "streamlab.h"

/* What one host function costs its stream; four of them on four streams;
 * a long one beside a kernel in another stream. Judges only the last. */
void host_functions(lab_run *run);

#endif
