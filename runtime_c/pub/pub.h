/* pub.h: a PUB-compatible BSP library over MPI (docs/pub.md).
 *
 * The Paderborn University BSP library (PUB) is no longer distributed; the CALL papers'
 * programs (the FFT of Fig. 5) use its message-passing BSP interface with oblivious
 * synchronisation and processor partitions. This is that interface, implemented on MPI:
 * compile pub.c with the program, `mpicc prog.c pub.c -I<dir of pub.h>`, run with mpirun.
 *
 * A BSP machine is a `t_bsp` the program owns (declare one, pass its address); its fields
 * are private to pub.c. Messages sent in a superstep are delivered by the synchronisation
 * that ends it (bsp_sync: a barrier of the machine; bsp_oblsync(bsp, n): wait for n
 * messages only) and stay readable until the next synchronisation of that machine.
 * Misuse prints one line "pub: FUNCTION: rank R (...): what is wrong" on stderr and calls
 * MPI_Abort. */
#ifndef PUB_H
#define PUB_H

#include <mpi.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One delivered message (fields private: use bspmsg_data, bspmsg_size, bspmsg_src). */
typedef struct t_bspmsg {
    int src;        /* sender's pid in the machine */
    int size;       /* bytes */
    long seq;       /* arrival order, to keep messages of one sender in sending order */
    void *data;
    size_t capacity; /* bytes allocated at data, reused by later supersteps */
} t_bspmsg;

struct pub_send;                /* a send in progress and its buffer (private to pub.c) */

/* A BSP machine: the one of bsp_begin, or a partition made by bsp_partition (fields private). */
typedef struct t_bsp {
    unsigned magic;             /* live, ended, or garbage (never set up) */
    MPI_Comm comm;              /* the machine's own communicator */
    int pid, nprocs, depth;     /* depth 0: bsp_begin's machine; k: k partitions below it */
    long step;                  /* supersteps finished; messages are tagged with it */
    struct t_bsp *parent, *child;
    struct pub_send *sends;     /* sends not complete yet (the first npending), then free
                                   slots whose copy buffers are reused (pub.c) */
    int npending, send_slots;
    long *sent_now;             /* per destination: messages sent in this superstep */
    long bytes_now;             /* payload bytes sent in this superstep (for pub_observer), */
    long messages_now;          /*   in this many messages (those to itself left out) */
    int *world;                 /* world rank of each pid, made when an observer first asks */
    long *sent_obl;             /* per destination: sent in oblivious supersteps since the last check */
    long recv_obl;              /* messages bsp_oblsync received since the last check */
    t_bspmsg *msgs;             /* delivered by the last synchronisation */
    int nmsgs, msg_slots;       /* msg_slots: entries of msgs allocated (with their buffers) */
} t_bsp;

/* Start: initialise MPI if the program did not, make `bsp` the machine of all processes. */
void bsp_begin(t_bsp *bsp, int *argc, char ***argv);
/* End the machine of bsp_begin (and MPI, if bsp_begin initialised it). */
void bsp_end(t_bsp *bsp);

int bsp_nprocs(const t_bsp *bsp);
int bsp_pid(const t_bsp *bsp);

/* End the superstep with a barrier of the machine; deliver the messages sent in it. */
void bsp_sync(t_bsp *bsp);
/* End the superstep when n messages sent to this processor in it have arrived (no barrier). */
void bsp_oblsync(t_bsp *bsp, int n);

/* Send size bytes to processor dest of the machine. bsp_send copies the data (the buffer
 * is free at once; the send completes in the background, so no synchronisation of this
 * processor waits for the receiver to take it); bsp_hpsend does not copy: leave the buffer
 * unchanged until this processor's next synchronisation, which waits until the send is
 * complete (docs/pub.md, "Oblivious sends over MPI"). */
void bsp_send(t_bsp *bsp, int dest, const void *data, int size);
void bsp_hpsend(t_bsp *bsp, int dest, const void *data, int size);

/* The messages delivered by the last synchronisation, ordered by sender then sending order. */
int bsp_nmsgs(const t_bsp *bsp);
t_bspmsg *bsp_getmsg(t_bsp *bsp, int i);
void *bspmsg_data(t_bspmsg *msg);
int bspmsg_size(const t_bspmsg *msg);
int bspmsg_src(const t_bspmsg *msg);

/* Split the machine into r submachines S_0 = {0..Y[0]-1}, S_i = {Y[i-1]..Y[i]-1}
 * (Y strictly increasing, Y[r-1] = bsp_nprocs(bsp)); `sub` becomes this processor's one,
 * numbered from 0. Partitions nest like a stack; bsp_done(sub) returns to the parent. */
void bsp_partition(t_bsp *bsp, t_bsp *sub, int r, const int *Y);
void bsp_done(t_bsp *sub);

/* Observing supersteps (for a tracing layer such as CALL's cll_pub.c; a program has no
 * use for it). pub_observer is NULL by default: then the library only tests it. When set,
 * it is called at the entry and the return of bsp_sync, bsp_oblsync, bsp_partition and
 * bsp_done, on the calling processor, with what happened in the superstep the call ends. */
typedef enum { PUB_SYNC, PUB_OBLSYNC, PUB_PARTITION, PUB_DONE } pub_call;
typedef struct pub_event {
    pub_call call;
    int returning;          /* 0: the call begins; 1: it returns */
    t_bsp *bsp;             /* the machine called on (bsp_done: the partition, ended at return) */
    /* the messages a processor sends itself are local copies: in none of the counts below */
    long bytes_out;         /* entry: payload bytes this processor sent in the superstep, */
    long messages_out;      /*   in this many messages */
    long bytes_in;          /* return of bsp_sync, bsp_oblsync: payload bytes delivered */
    int nsenders;           /* return of bsp_sync, bsp_oblsync: messages delivered, and */
    const int *senders;     /*   the MPI_COMM_WORLD rank of each one's sender (repeats kept) */
    t_bsp *sub;             /* return of bsp_partition: this processor's subgroup, which is */
    int group, groups;      /*   subgroup `group` (from 0) of the `groups` made */
} pub_event;
extern void (*pub_observer)(const pub_event *event);

/* Naming supersteps in messages (for the same tracer). The library's messages number a
 * machine's supersteps from 1 at its bsp_begin or bsp_partition, oblivious ones included. A
 * tracer whose trace numbers them otherwise sets pub_locate (NULL by default): for the
 * superstep `bsp` is in (the one its next synchronisation ends), it fills `place` as the trace
 * names it and returns 1, or returns 0 when the trace does not record that superstep. */
typedef struct pub_place {
    int run;                /* the trace's run, from 1 */
    const char *machine;    /* the machine's name in the trace (0, 0.1, ...) */
    long step;              /* the superstep's number in that machine and run, from 1 */
} pub_place;
extern int (*pub_locate)(const t_bsp *bsp, pub_place *place);

#ifdef __cplusplus
}
#endif

#endif
