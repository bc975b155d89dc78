/* A PUB program whose processors fail (tests/test_pub_faults.py). Each run of the sync
 * experiment f is three supersteps in which every processor sends N bytes to the next one
 * and waits obliviously for the one message sent to it. Argument "ok" runs as it should;
 * "abort": the last processor aborts in the second run, after two supersteps; "misuse": it
 * sends to a processor outside the machine there instead (pub.c's message, then MPI_Abort); "late": the
 * last processor reaches report 4 s after the others (run it with CLL_MPI_TIMEOUT=1);
 * "exit": the last processor ends the program without report. */
#include "pub.h"
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#pragma cll parallel PUB machine procs = 2:4:2

int main(int argc, char **argv)
{
    t_bsp machine;
    static char data[4096];
    const char *mode = argc > 1 ? argv[1] : "ok";
    int N, run = 0;
    bsp_begin(&machine, &argc, &argv);
    int p = bsp_nprocs(&machine), me = bsp_pid(&machine);
    #pragma cll for(N = 1024; N <= 4096; N *= 2)
    #pragma cll sync f f[0] + f[1]*N
    run++;
    for (int s = 0; s < 3; s++) {
        if (!strcmp(mode, "abort") && run == 2 && s == 2 && me == p - 1)
            abort();
        if (!strcmp(mode, "misuse") && run == 2 && s == 2 && me == p - 1)
            bsp_send(&machine, p, data, 1);
        bsp_send(&machine, (me + 1) % p, data, N);
        bsp_oblsync(&machine, 1);
    }
    #pragma cll end f
    #pragma cll end for
    if (!strcmp(mode, "late") && me == p - 1)
        sleep(4);
    if (!strcmp(mode, "exit") && me == p - 1) {
        bsp_end(&machine);
        return 0;
    }
    #pragma cll report all
    bsp_end(&machine);
    return 0;
}
