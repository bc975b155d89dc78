/* A PUB program for tests/test_pub_review38.py. Each run of the sync experiment e is K
 * supersteps that compute nothing: "empty" ends each with bsp_sync (the runs whose first
 * superstep held the tracer's one-time work); "extra": processor 0 makes one oblivious
 * superstep more before the first bsp_sync, a misuse that stops every processor inside run
 * 1, processor 1 before it finished a superstep. */
#include "pub.h"
#include <string.h>

#pragma cll parallel PUB gbsp procs = 1:2:2

static t_bsp machine;
static t_bsp *gbsp = &machine;

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "empty";
    int K, rep;
    bsp_begin(gbsp, &argc, &argv);
    int me = bsp_pid(gbsp);
    #pragma cll for(rep = 0; rep < 2; rep++)
    #pragma cll for(K = 10; K <= 20; K *= 2)
    #pragma cll sync e e[0] + e[1]*K
    {
        if (!strcmp(mode, "extra") && me == 0)
            bsp_oblsync(gbsp, 0);
        for (int k = 0; k < K; k++)
            bsp_sync(gbsp);
    }
    #pragma cll end e
    #pragma cll end for
    #pragma cll end for
    #pragma cll report all
    bsp_end(gbsp);
    return 0;
}
