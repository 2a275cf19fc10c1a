/* Calls ex01's student function, create_work_streams(), as the given
 * program does but with no GPU needed before it: the red-team fixtures'
 * attacks (tests/fixtures/redteam/) run first, then the CUDA call after
 * them fails where there is no GPU, and CUDA_CHECK ends the program. It
 * takes the grader's token off stdin first, as the given program does.
 * tests/cpu_redteam.bats builds it around a fixture and runs it in the
 * grader's sandbox (tests/tools/redteam_grade.py). */
#include "ex01.h"

#include <stdio.h>

int main(void)
{
    /* as grading_begin() does under --grade: the token off stdin, stdin closed */
    char token[80];
    if (!fgets(token, sizeof token, stdin) || !freopen("/dev/null", "r", stdin))
        return 2;
    cudaStream_t streams[2];
    create_work_streams(streams);
    return 0;
}
