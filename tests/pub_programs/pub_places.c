/* A PUB program whose misuses name a superstep (tests/test_pub_faults.py): pub.c's messages
 * must number it as the trace does (run, machine, step). Each run of the sync experiment f
 * (N = 1024, 2048, 4096) is three supersteps in which every processor sends N bytes to the
 * next one and waits obliviously for the one message sent to it; in run 2 the second one is
 * a partition into halves (Y = {p/2, p}) whose subgroups make two such supersteps, so that
 * machine 0's supersteps in the trace (the partition's `part` among them) are not the
 * library's. The argument: "ok" runs as it should; "short": in run 2, superstep 3 of
 * machine 0, the last processor waits for 2 messages where 1 is sent; "partition": in the
 * second superstep of subgroup 0.1 it does; "steps": in run 2, superstep 3 of machine 0,
 * processor 0 calls bsp_sync while the others call bsp_oblsync(0) and then bsp_sync;
 * "mean": there processors 1 .. p-2 call bsp_oblsync(0) once and the last one twice first
 * (at P = 4 supersteps 3, 4, 4, 5: 1 and 2 are in the mean one); "outside": after the runs
 * the last processor waits for a message never sent. */
#include "pub.h"
#include <string.h>

#pragma cll parallel PUB machine procs = 2:4:2

static char data[4096];

/* One superstep of `bsp`: N bytes to the next processor, then wait for `wanted` messages. */
static void ring(t_bsp *bsp, int N, int wanted)
{
    bsp_send(bsp, (bsp_pid(bsp) + 1) % bsp_nprocs(bsp), data, N);
    bsp_oblsync(bsp, wanted);
}

int main(int argc, char **argv)
{
    t_bsp machine, half;
    const char *mode = argc > 1 ? argv[1] : "ok";
    int N, run = 0;
    bsp_begin(&machine, &argc, &argv);
    int p = bsp_nprocs(&machine), me = bsp_pid(&machine), last = me == p - 1;
    int Y[2] = {p / 2, p};
    #pragma cll for(N = 1024; N <= 4096; N *= 2)
    #pragma cll sync f f[0] + f[1]*N
    run++;
    ring(&machine, N, 1);
    if (run == 2) {
        bsp_partition(&machine, &half, 2, Y);
        ring(&half, N, 1);
        ring(&half, N, 1 + (!strcmp(mode, "partition") && last));
        bsp_done(&half);
    } else {
        ring(&machine, N, 1);
    }
    if (run == 2 && (!strcmp(mode, "steps") || !strcmp(mode, "mean"))) {
        if (me != 0)
            bsp_oblsync(&machine, 0);
        if (me != 0 && last && !strcmp(mode, "mean"))
            bsp_oblsync(&machine, 0);
        bsp_sync(&machine);
    }
    ring(&machine, N, 1 + (run == 2 && !strcmp(mode, "short") && last));
    #pragma cll end f
    #pragma cll end for
    if (!strcmp(mode, "outside") && last)
        bsp_oblsync(&machine, 1);
    #pragma cll report all
    bsp_end(&machine);
    return 0;
}
