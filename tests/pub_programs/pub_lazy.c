/* pub_lazy.c: large messages over oblivious synchronisation (tests/test_pub_lazy.py).
 *
 * `mpirun -np 2 pub_lazy MODE`; each processor prints "ok MODE PID ..." when all it checked
 * was right, "BAD MODE PID ..." otherwise. Processor 1 is the heavy one: it computes W_MS
 * milliseconds (a busy loop) before it synchronises, so processor 0's sends to it are
 * taken late.
 *   oblivious  processor 0 sends 64 KiB with bsp_send and calls bsp_oblsync(bsp, 0): it
 *              prints how long it took (seconds), which must not include processor 1's w
 *   many       6 oblivious supersteps of 4 messages of 8 .. 192 KiB from processor 0 to 1
 *              and 2 to itself (completed at once, so their slots are reused while those to
 *              1 are pending), sent from one buffer overwritten after each send
 *   end        processor 0 sends 3 x 64 KiB and goes straight to bsp_end
 *   partition  the same inside a partition: processor 0 sends and calls bsp_done at once
 *   hpsend     processor 0 sends 64 KiB with bsp_hpsend, synchronises, then overwrites the
 *              buffer: processor 1 must get the data as it was at the send
 *   forward    processor 1 passes a message it received back to processor 0 with bsp_hpsend
 *              (from the message's own bytes), while the synchronisation that ends the
 *              superstep delivers a new message from processor 0 to it */
#include "pub.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define W_MS 200.0
#define KIB 1024

static int bad;

/* Byte i of message `seed`: depends on both, so that a shifted, stale or mixed-up buffer
 * shows. */
static unsigned char pattern(int seed, int i)
{
    return (unsigned char)(i * 7 + (i >> 8) * 3 + seed * 13 + 1);
}

static void fill(unsigned char *buffer, int size, int seed)
{
    for (int i = 0; i < size; i++)
        buffer[i] = pattern(seed, i);
}

/* Check message k of the last synchronisation: from `src`, `size` bytes of pattern `seed`. */
static void expect(t_bsp *bsp, const char *mode, int k, int src, int size, int seed)
{
    t_bspmsg *msg = bsp_getmsg(bsp, k);
    const unsigned char *data = bspmsg_data(msg);
    int wrong = -1;
    if (bspmsg_src(msg) != src || bspmsg_size(msg) != size) {
        printf("BAD %s %d message %d: from %d, %d bytes (expected %d bytes from %d)\n", mode,
               bsp_pid(bsp), k, bspmsg_src(msg), bspmsg_size(msg), size, src);
        bad = 1;
        return;
    }
    for (int i = 0; i < size && wrong < 0; i++)
        if (data[i] != pattern(seed, i))
            wrong = i;
    if (wrong >= 0) {
        printf("BAD %s %d message %d (seed %d): byte %d is %d, expected %d\n", mode,
               bsp_pid(bsp), k, seed, wrong, data[wrong], pattern(seed, wrong));
        bad = 1;
    }
}

/* The heavy processor's work: busy for W_MS milliseconds of wall-clock time. */
static void heavy(void)
{
    double t0 = MPI_Wtime();
    while (MPI_Wtime() - t0 < W_MS * 1e-3)
        ;
}

static void oblivious(t_bsp *bsp, unsigned char *buffer)
{
    bsp_sync(bsp);   /* both start here */
    if (bsp_pid(bsp) == 0) {
        double t0 = MPI_Wtime();
        fill(buffer, 64 * KIB, 5);
        bsp_send(bsp, 1, buffer, 64 * KIB);
        bsp_oblsync(bsp, 0);
        printf("ok oblivious 0 seconds %.6f w %.6f\n", MPI_Wtime() - t0, W_MS * 1e-3);
    } else {
        heavy();
        bsp_oblsync(bsp, 1);
        expect(bsp, "oblivious", 0, 0, 64 * KIB, 5);
        if (!bad)
            printf("ok oblivious 1\n");
    }
    bsp_sync(bsp);
}

/* Message m of superstep s, to processor `to`: its size (8 to 192 KiB, varying so that
 * reused buffers must grow) and pattern. */
static int many_size(int s, int m, int to)
{
    return (8 + 8 * ((s * 5 + m * 3 + to * 7) % 24)) * KIB;
}

static int many_seed(int s, int m, int to)
{
    return 100 * s + 10 * m + to;
}

static void many(t_bsp *bsp, unsigned char *buffer)
{
    enum { STEPS = 6, TO_1 = 4, TO_SELF = 2 };
    int me = bsp_pid(bsp);
    for (int s = 0; s < STEPS; s++) {
        if (me == 0) {
            for (int m = 0; m < TO_1 + TO_SELF; m++) {
                int to = m < TO_1 ? 1 : 0;
                fill(buffer, many_size(s, m, to), many_seed(s, m, to));
                bsp_send(bsp, to, buffer, many_size(s, m, to));
                memset(buffer, 0xEE, (size_t)many_size(s, m, to));   /* the user reuses it */
            }
            bsp_oblsync(bsp, TO_SELF);
            for (int m = 0; m < TO_SELF; m++)
                expect(bsp, "many", m, 0, many_size(s, TO_1 + m, 0), many_seed(s, TO_1 + m, 0));
        } else {
            if (s == 0)
                heavy();   /* processor 0 races ahead: its sends to 1 pile up */
            bsp_oblsync(bsp, TO_1);
            for (int m = 0; m < TO_1; m++)
                expect(bsp, "many", m, 0, many_size(s, m, 1), many_seed(s, m, 1));
        }
    }
    bsp_sync(bsp);
    if (!bad)
        printf("ok many %d\n", me);
}

/* Processor 0 sends `count` messages of 64 KiB to processor 1 of `bsp` in one oblivious
 * superstep and returns at once; processor 1 takes them after its heavy work and checks
 * them. */
static void send_and_leave(t_bsp *bsp, const char *mode, unsigned char *buffer, int count)
{
    if (bsp_pid(bsp) == 0) {
        for (int m = 0; m < count; m++) {
            fill(buffer, 64 * KIB, 50 + m);
            bsp_send(bsp, 1, buffer, 64 * KIB);
        }
        bsp_oblsync(bsp, 0);
    } else {
        heavy();
        bsp_oblsync(bsp, count);
        for (int m = 0; m < count; m++)
            expect(bsp, mode, m, 0, 64 * KIB, 50 + m);
    }
}

static void hpsend(t_bsp *bsp, unsigned char *buffer)
{
    if (bsp_pid(bsp) == 0) {
        fill(buffer, 64 * KIB, 9);
        bsp_hpsend(bsp, 1, buffer, 64 * KIB);
        bsp_oblsync(bsp, 0);
        memset(buffer, 0xEE, 64 * KIB);   /* allowed after this processor's synchronisation */
    } else {
        heavy();
        bsp_oblsync(bsp, 1);
        expect(bsp, "hpsend", 0, 0, 64 * KIB, 9);
    }
    bsp_sync(bsp);
    if (!bad)
        printf("ok hpsend %d\n", bsp_pid(bsp));
}

static void forward(t_bsp *bsp, unsigned char *buffer)
{
    if (bsp_pid(bsp) == 0) {
        fill(buffer, 64 * KIB, 21);
        bsp_send(bsp, 1, buffer, 64 * KIB);
        bsp_sync(bsp);
        fill(buffer, 64 * KIB, 22);
        bsp_send(bsp, 1, buffer, 64 * KIB);
        heavy();   /* processor 1 takes the new message before this one takes the forward */
        bsp_oblsync(bsp, 1);
        expect(bsp, "forward", 0, 1, 64 * KIB, 21);
    } else {
        bsp_sync(bsp);
        bsp_hpsend(bsp, 0, bspmsg_data(bsp_getmsg(bsp, 0)), 64 * KIB);
        bsp_oblsync(bsp, 1);
        expect(bsp, "forward", 0, 0, 64 * KIB, 22);
    }
    bsp_sync(bsp);
    if (!bad)
        printf("ok forward %d\n", bsp_pid(bsp));
}

int main(int argc, char **argv)
{
    t_bsp bsp, sub;
    const char *mode = argc > 1 ? argv[1] : "oblivious";
    unsigned char *buffer = malloc(256 * KIB);
    bsp_begin(&bsp, &argc, &argv);
    if (bsp_nprocs(&bsp) != 2 || buffer == NULL) {
        fprintf(stderr, "pub_lazy: run on 2 processors\n");
        return 2;
    }
    if (!strcmp(mode, "oblivious")) {
        oblivious(&bsp, buffer);
    } else if (!strcmp(mode, "many")) {
        many(&bsp, buffer);
    } else if (!strcmp(mode, "end")) {
        send_and_leave(&bsp, mode, buffer, 3);
        if (!bad)
            printf("ok end %d\n", bsp_pid(&bsp));
    } else if (!strcmp(mode, "partition")) {
        const int Y[] = {2};
        bsp_partition(&bsp, &sub, 1, Y);
        send_and_leave(&sub, mode, buffer, 3);
        bsp_done(&sub);
        bsp_sync(&bsp);
        if (!bad)
            printf("ok partition %d\n", bsp_pid(&bsp));
    } else if (!strcmp(mode, "hpsend")) {
        hpsend(&bsp, buffer);
    } else if (!strcmp(mode, "forward")) {
        forward(&bsp, buffer);
    } else {
        fprintf(stderr, "pub_lazy: unknown mode %s\n", mode);
        return 2;
    }
    bsp_end(&bsp);
    free(buffer);
    return bad;
}
