/* Test program of the PUB library (runtime_c/pub, tests/test_pub.py): `pub_cases MODE`
 * runs one case; correct cases print "ok MODE pid ..." lines, misuse cases must be stopped
 * by the library with one message. Any wrong delivery prints "BAD ..." and exits 3. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "pub.h"

static int failed;
#define EXPECT(cond, ...) do { if (!(cond)) { printf("BAD " __VA_ARGS__); printf("\n"); failed = 1; } } while (0)

static void spin(double seconds)
{
    double start = MPI_Wtime();
    while (MPI_Wtime() - start < seconds)
        ;
}

/* Every processor sends pid+1 messages to every processor, message k to d holding the ints
 * (pid, d, k, step); two supersteps, the second with bsp_hpsend; then one large message
 * to the next processor, then an empty superstep. */
static void case_sync(t_bsp *bsp)
{
    int p = bsp_nprocs(bsp), me = bsp_pid(bsp);
    static int payload[64][4];
    for (int step = 0; step < 2; step++) {
        int n = 0;
        for (int d = 0; d < p; d++)
            for (int k = 0; k <= me; k++, n++) {
                int v[4] = {me, d, k, step};
                memcpy(payload[n], v, sizeof v);
                if (step == 0) {
                    bsp_send(bsp, d, v, sizeof v);
                    v[0] = -1; /* bsp_send copied it */
                } else {
                    bsp_hpsend(bsp, d, payload[n], sizeof v);
                }
            }
        bsp_sync(bsp);
        int expected = p * (p + 1) / 2, i = 0;
        EXPECT(bsp_nmsgs(bsp) == expected, "pid %d step %d: %d messages, expected %d", me, step,
               bsp_nmsgs(bsp), expected);
        for (int src = 0; src < p; src++)
            for (int k = 0; k <= src; k++, i++) {
                t_bspmsg *m = bsp_getmsg(bsp, i);
                int *v = bspmsg_data(m);
                EXPECT(bspmsg_size(m) == 4 * sizeof(int) && bspmsg_src(m) == src && v[0] == src &&
                       v[1] == me && v[2] == k && v[3] == step,
                       "pid %d step %d message %d: from %d (%d %d %d %d)", me, step, i,
                       bspmsg_src(m), v[0], v[1], v[2], v[3]);
            }
        printf("ok sync %d step %d messages %d\n", me, step, bsp_nmsgs(bsp));
    }
    /* a large message reuses (and grows) the buffers of the small ones */
    static unsigned char big[200000];
    memset(big, me + 1, sizeof big);
    bsp_send(bsp, (me + 1) % p, big, sizeof big);
    memset(big, 0, sizeof big);
    bsp_sync(bsp);
    unsigned char *got = bspmsg_data(bsp_getmsg(bsp, 0));
    EXPECT(bsp_nmsgs(bsp) == 1 && bspmsg_size(bsp_getmsg(bsp, 0)) == sizeof big &&
           got[0] == (me + p - 1) % p + 1 && got[sizeof big - 1] == got[0],
           "pid %d: the large message", me);
    bsp_sync(bsp);
    EXPECT(bsp_nmsgs(bsp) == 0, "pid %d: an empty superstep delivered %d", me, bsp_nmsgs(bsp));
}

#define STEPS 40
/* Processors 0 and 1 exchange obliviously while processor 2 (and up) is elsewhere: it waits
 * in a plain MPI_Recv for processor 0 to finish all its exchanges, which cannot happen if
 * bsp_oblsync involved processor 2. Then processor 0 races ahead STEPS supersteps
 * (oblsync(0)) sending to a late processor 1: each message must be taken in its own step. */
static void case_obl(t_bsp *bsp)
{
    int p = bsp_nprocs(bsp), me = bsp_pid(bsp), token = 7;
    long s;
    if (me < 2) {
        for (s = 0; s < STEPS; s++) {
            bsp_send(bsp, 1 - me, &s, sizeof s);
            bsp_oblsync(bsp, 1);
            long got = *(long *)bspmsg_data(bsp_getmsg(bsp, 0));
            EXPECT(bsp_nmsgs(bsp) == 1 && got == s, "pid %d step %ld got %ld", me, s, got);
        }
        if (me == 0)
            for (int d = 2; d < p; d++)
                MPI_Send(&token, 1, MPI_INT, d, 99, MPI_COMM_WORLD);
        if (me == 1)
            spin(0.2);
        for (s = STEPS; s < 2 * STEPS; s++) {
            if (me == 0)
                bsp_send(bsp, 1, &s, sizeof s);
            bsp_oblsync(bsp, me == 1);
            if (me == 1) {
                long got = *(long *)bspmsg_data(bsp_getmsg(bsp, 0));
                EXPECT(got == s, "pid 1 step %ld got the message of step %ld", s, got);
            }
        }
    } else {
        MPI_Recv(&token, 1, MPI_INT, 0, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (s = 0; s < 2 * STEPS; s++)
            bsp_oblsync(bsp, 0);
    }
    bsp_sync(bsp);
    printf("ok obl %d\n", me);
}

/* Halves, then halves of halves; each level syncs inside its group and checks numbering. */
static void nest(t_bsp *bsp, int world_pid)
{
    int p = bsp_nprocs(bsp), me = bsp_pid(bsp);
    printf("ok nested %d depth-size %d pid %d\n", world_pid, p, me);
    if (p > 1) {
        t_bsp sub;
        int Y[2] = {p / 2, p};
        bsp_partition(bsp, &sub, 2, Y);
        int low = me < Y[0] ? 0 : Y[0], high = me < Y[0] ? Y[0] : p;
        EXPECT(bsp_nprocs(&sub) == high - low && bsp_pid(&sub) == me - low,
               "pid %d: sub %d of %d", me, bsp_pid(&sub), bsp_nprocs(&sub));
        nest(&sub, world_pid);
        bsp_done(&sub);
    }
    int partner = (me + 1) % p;
    bsp_send(bsp, partner, &me, sizeof me);
    bsp_sync(bsp);
    EXPECT(bsp_nmsgs(bsp) == 1 && *(int *)bspmsg_data(bsp_getmsg(bsp, 0)) == (me + p - 1) % p &&
           bspmsg_src(bsp_getmsg(bsp, 0)) == (me + p - 1) % p,
           "pid %d of %d: wrong message after the subgroup's sync", me, p);
}

static void case_nested(t_bsp *bsp)
{
    nest(bsp, bsp_pid(bsp));
    if (bsp_nprocs(bsp) == 4) { /* uneven: {0}, {1, 2}, {3} */
        t_bsp sub;
        int Y[3] = {1, 3, 4}, me = bsp_pid(bsp);
        bsp_partition(bsp, &sub, 3, Y);
        int size = me == 0 || me == 3 ? 1 : 2, pid = me == 2 ? 1 : 0;
        EXPECT(bsp_nprocs(&sub) == size && bsp_pid(&sub) == pid, "pid %d: uneven %d of %d",
               me, bsp_pid(&sub), bsp_nprocs(&sub));
        bsp_send(&sub, bsp_nprocs(&sub) - 1 - bsp_pid(&sub), &me, sizeof me);
        bsp_oblsync(&sub, 1);
        bsp_done(&sub);
        printf("ok uneven %d\n", me);
    }
}

/* The paper's Fig. 5 pattern: recursive halving, bsp_hpsend to the partner, bsp_oblsync. */
static int recurse(t_bsp *gbsp, int value)
{
    if (bsp_nprocs(gbsp) == 1)
        return value;
    t_bsp bsp_new;
    int subgroup[2], partner, mine, sum;
    subgroup[1] = bsp_nprocs(gbsp);
    subgroup[0] = bsp_nprocs(gbsp) / 2;
    bsp_partition(gbsp, &bsp_new, 2, subgroup);
    mine = recurse(&bsp_new, value);
    if (bsp_pid(gbsp) < subgroup[0])
        partner = bsp_pid(&bsp_new) + subgroup[0];
    else
        partner = bsp_pid(&bsp_new);
    bsp_done(&bsp_new);
    bsp_hpsend(gbsp, partner, &mine, sizeof mine);
    bsp_oblsync(gbsp, 1);
    sum = mine + *(int *)bspmsg_data(bsp_getmsg(gbsp, 0));
    return sum;
}

static void case_recursive(t_bsp *bsp)
{
    int p = bsp_nprocs(bsp), total = recurse(bsp, bsp_pid(bsp) + 1);
    EXPECT(total == p * (p + 1) / 2, "pid %d: sum %d", bsp_pid(bsp), total);
    printf("ok recursive %d sum %d\n", bsp_pid(bsp), total);
}

/* Figure 1: two processors, imbalanced supersteps (w / 2w then 2w / w), oblivious exchanges. */
static void case_fig1(t_bsp *bsp)
{
    double w = 0.05, start;
    int me = bsp_pid(bsp);
    bsp_sync(bsp);
    start = MPI_Wtime();
    for (int s = 0; s < 2; s++) {
        spin(w * (me == s ? 1 : 2));
        bsp_send(bsp, 1 - me, &s, sizeof s);
        bsp_oblsync(bsp, 1);
        EXPECT(*(int *)bspmsg_data(bsp_getmsg(bsp, 0)) == s, "pid %d step %d", me, s);
    }
    printf("ok fig1 %d %.3f\n", me, MPI_Wtime() - start);
}

/* bsp_partition waits for no processor outside its subgroup (the paper's partition has no
 * barrier): with Y = {2, 4}, processors 2 and 3 reach it a second late, while 0 and 1 make a
 * superstep in their subgroup and leave it; each prints the seconds from the machine's
 * bsp_sync to its bsp_done. */
static void case_partition_nowait(t_bsp *bsp)
{
    int me = bsp_pid(bsp), Y[2] = {2, 4}, x = me;
    double start;
    t_bsp sub;
    bsp_sync(bsp);
    start = MPI_Wtime();
    if (me >= 2)
        spin(1.0);
    bsp_partition(bsp, &sub, 2, Y);
    bsp_send(&sub, 1 - bsp_pid(&sub), &x, sizeof x);
    bsp_sync(&sub);
    EXPECT(bsp_nmsgs(&sub) == 1 && *(int *)bspmsg_data(bsp_getmsg(&sub, 0)) == (me ^ 1),
           "pid %d", me);
    bsp_done(&sub);
    printf("ok partition_nowait %d %.3f\n", me, MPI_Wtime() - start);
    bsp_sync(bsp);
}

/* ---- misuse: each of these must be stopped by the library */
static void misuse(t_bsp *bsp, const char *mode)
{
    int me = bsp_pid(bsp), p = bsp_nprocs(bsp), x = 1;
    t_bsp sub;
    if (!strcmp(mode, "bad_dest")) {
        if (me == p - 1)
            bsp_send(bsp, p, &x, sizeof x);
        bsp_sync(bsp);
    } else if (!strcmp(mode, "done_root")) {
        bsp_done(bsp);
    } else if (!strcmp(mode, "done_twice")) {
        int Y[1] = {p};
        bsp_partition(bsp, &sub, 1, Y);
        bsp_done(&sub);
        bsp_done(&sub);
    } else if (!strcmp(mode, "partition_order")) {
        int Y[2] = {0, p};
        bsp_partition(bsp, &sub, 2, Y);
    } else if (!strcmp(mode, "partition_last")) {
        int Y[1] = {p + 1};
        bsp_partition(bsp, &sub, 1, Y);
    } else if (!strcmp(mode, "partition_r")) {
        bsp_partition(bsp, &sub, 0, &p);
    } else if (!strcmp(mode, "obl_never")) {
        if (me == 0)
            bsp_oblsync(bsp, 1);
        else
            MPI_Barrier(MPI_COMM_WORLD);
    } else if (!strcmp(mode, "obl_extra")) {
        if (me == 0) {
            bsp_send(bsp, 1, &x, sizeof x);
            bsp_send(bsp, 1, &x, sizeof x);
        }
        bsp_oblsync(bsp, me == 1);
        bsp_sync(bsp);
    } else if (!strcmp(mode, "unsent")) {
        bsp_send(bsp, (me + 1) % p, &x, sizeof x);
    } else if (!strcmp(mode, "steps")) {
        if (me == 0)
            bsp_oblsync(bsp, 0);
        bsp_sync(bsp);
    } else if (!strcmp(mode, "sync_missing")) {
        if (me == 0)
            bsp_sync(bsp);
        else
            MPI_Barrier(MPI_COMM_WORLD);
    } else if (!strcmp(mode, "getmsg")) {
        bsp_sync(bsp);
        bsp_getmsg(bsp, 0);
    } else if (!strcmp(mode, "partitioned_sync")) {
        int Y[1] = {p};
        bsp_partition(bsp, &sub, 1, Y);
        bsp_sync(bsp);
    } else if (!strcmp(mode, "end_open")) {
        int Y[1] = {p};
        bsp_partition(bsp, &sub, 1, Y);
        return; /* main calls bsp_end with the partition open */
    } else if (!strcmp(mode, "done_unsynced")) {
        int Y[1] = {p};
        bsp_partition(bsp, &sub, 1, Y);
        bsp_send(&sub, (me + 1) % p, &x, sizeof x);
        bsp_done(&sub);
    } else if (!strcmp(mode, "done_hpsend")) {   /* 1 MiB from the user's buffer, then bsp_done */
        int Y[1] = {p};
        char *big = calloc(1 << 20, 1);
        bsp_partition(bsp, &sub, 1, Y);
        if (me == 0)
            bsp_hpsend(&sub, 1, big, 1 << 20);
        bsp_done(&sub);
        memset(big, 7, 1 << 20);   /* PUB's rule: the buffer is the program's again */
        free(big);
        bsp_sync(bsp);
    } else if (!strcmp(mode, "done_unreceived")) {   /* sent, synchronised, never taken */
        int Y[1] = {p};
        bsp_partition(bsp, &sub, 1, Y);
        if (me == 0)
            bsp_send(&sub, 1, &x, sizeof x);
        bsp_oblsync(&sub, 0);
        bsp_done(&sub);
        bsp_sync(bsp);
    } else if (!strcmp(mode, "after_end")) {   /* bsp_end finalised MPI */
        bsp_end(bsp);
        bsp_sync(bsp);
    } else if (!strcmp(mode, "end_sync") || !strcmp(mode, "sync_end")) {
        if (me != (mode[0] == 'e' ? 0 : p - 1))   /* it goes on to main's bsp_end */
            bsp_sync(bsp);
    } else if (!strcmp(mode, "partition_sync")) {
        int Y[1] = {p};
        if (me == 0) {
            bsp_partition(bsp, &sub, 1, Y);
            bsp_done(&sub);
        } else {
            bsp_sync(bsp);
        }
    } else if (!strcmp(mode, "partition_args")) {
        int Y[1] = {p}, Z[2] = {1, p};
        if (me == 0)
            bsp_partition(bsp, &sub, 1, Y);
        else
            bsp_partition(bsp, &sub, 2, Z);
        bsp_sync(&sub);
        bsp_done(&sub);
    } else if (!strcmp(mode, "partition_bounds")) {   /* the same r, processor 0 another Y */
        int Y[2] = {me == 0 ? 1 : 2, p};
        bsp_partition(bsp, &sub, 2, Y);
        bsp_done(&sub);
    } else if (!strcmp(mode, "partition_missing")) {   /* a member of the subgroup never comes */
        int Y[1] = {p};
        if (me == 0)
            bsp_partition(bsp, &sub, 1, Y);
        else
            MPI_Barrier(MPI_COMM_WORLD);
    } else if (!strcmp(mode, "partition_outside_missing")) {   /* one outside the subgroup */
        int Y[2] = {1, p};
        if (me == 0) {
            bsp_partition(bsp, &sub, 2, Y);
            bsp_done(&sub);
            bsp_sync(bsp);
        } else {
            MPI_Barrier(MPI_COMM_WORLD);
        }
    } else if (!strcmp(mode, "done_sync")) {
        int Y[1] = {p};
        bsp_partition(bsp, &sub, 1, Y);
        if (me != 0)
            bsp_sync(&sub);
        bsp_done(&sub);
    } else {
        fprintf(stderr, "pub_cases: unknown mode %s\n", mode);
        exit(2);
    }
}

int main(int argc, char **argv)
{
    t_bsp bsp;
    const char *mode = argc > 1 ? argv[1] : "sync";
    bsp_begin(&bsp, &argc, &argv);
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (!strcmp(mode, "sync"))
        case_sync(&bsp);
    else if (!strcmp(mode, "obl"))
        case_obl(&bsp);
    else if (!strcmp(mode, "nested"))
        case_nested(&bsp);
    else if (!strcmp(mode, "recursive"))
        case_recursive(&bsp);
    else if (!strcmp(mode, "fig1"))
        case_fig1(&bsp);
    else if (!strcmp(mode, "partition_nowait"))
        case_partition_nowait(&bsp);
    else
        misuse(&bsp, mode);
    bsp_end(&bsp);
    return failed ? 3 : 0;
}
