/* fft_pub.c -- the divide-and-conquer FFT of the CALL paper (Fig. 4 and 5) on the PUB library.
 *
 * The paper's program with its pragmas as printed (Fig. 4's `\` continued lines and
 * formulas; Fig. 5's `#pragma ll end D` typo corrected), on this project's PUB (docs/pub.md).
 * The input a and the result A are replicated on every processor. A machine of P > 1
 * processors splits in two halves (bsp_partition); the lower half transforms the even
 * elements, the upper half the odd ones, recursively; back in the machine (bsp_done) each
 * processor sends its half of the result to its partner in the other half (bsp_hpsend) and
 * waits for the partner's only (bsp_oblsync), then combines them. A machine of one
 * processor runs the sequential FFT. The experiments A..G time the steps, f the whole
 * transform; each execution of the `sync` experiment f is one run of supersteps in the
 * trace, for the OBSP* model (llac's `obsp`).
 * The sampling loop sweeps N = 2^10 ... MAXN (argument 1, default 2^17), REPS times each
 * (repetitions outermost, as samples/fft_mpi). P must be a power of two. Built as plain C
 * (mpicc fft_pub.c pub.c, pragmas ignored) it transforms one signal of MAXN points and
 * prints the same checksum.
 */
#include "pub.h"

#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REPS 3

typedef double complex Complex;

#pragma cll parallel PUB gbsp\
   procs = 1:8:2

/* A[k] = B[k] + W^k C[k], A[k+n] = B[k] - W^k C[k] for the transforms B, C of the even and
 * odd parts (either may be A's own half). W[k*stride] = exp(-2 pi i k / 2n). */
static void combine(Complex *A, const Complex *B, const Complex *C, const Complex *W, int n,
                    int stride)
{
    for (int k = 0; k < n; k++) {
        Complex even = B[k], odd = W[(size_t)k * stride] * C[k];
        A[k] = even + odd;
        A[k + n] = even - odd;
    }
}

/* A[0..N) = DFT of a[0], a[stride], ..., sequentially. */
static void seqDandCFFT(Complex *A, const Complex *a, const Complex *W, int N, int stride)
{
    if (N == 1) {
        A[0] = a[0];
        return;
    }
    seqDandCFFT(A, a, W, N / 2, 2 * stride);
    seqDandCFFT(A + N / 2, a + stride, W, N / 2, 2 * stride);
    combine(A, A, A + N / 2, W, N / 2, stride);
}

/* Fig. 5: A[0..N) = DFT of a[0], a[stride], ... on the processors of gbsp (every one gets
 * all of A). */
static void parDandCFFT(Complex *A, const Complex *a, const Complex *W, int N, int stride,
                        t_bsp *gbsp)
{
    int n, size, partner, subgroup[2];
    Complex *B, *C;
    t_bsp bsp_new;
    if (bsp_nprocs(gbsp) > 1) {
        if (N == 1) {A[0] = a[0];}
        else {
            #pragma cll A A[0]
            n = N/2; size = n * (int)sizeof(Complex); B = A; C = A + n;
            #pragma cll end A
            #pragma cll B B[0]
            subgroup[1] = bsp_nprocs(gbsp);
            subgroup[0] = (bsp_nprocs(gbsp)/2);
            bsp_partition(gbsp, &bsp_new, 2, subgroup);
            #pragma cll end B
            if(bsp_pid(gbsp)<subgroup[0]) {
                parDandCFFT(B, a, W, n, stride * 2, &bsp_new);
            #pragma cll C C[0]
                partner = bsp_pid(&bsp_new) + subgroup[0];
                bsp_done(&bsp_new);
            #pragma cll end C
            #pragma cll D D[0] + D[1] * size
                bsp_hpsend(gbsp, partner, B, size);
                bsp_oblsync(gbsp, 1);
            #pragma cll end D
            #pragma cll E E[0] + E[1] * n
                C = (Complex *)bspmsg_data(bsp_getmsg(gbsp, 0));
            #pragma cll end E
            } else {
                parDandCFFT(C, a + stride, W, n, stride * 2, &bsp_new);
            #pragma cll C C[0]
                partner = bsp_pid(&bsp_new);
                bsp_done(&bsp_new);
            #pragma cll end C
            #pragma cll D D[0] + D[1] * size
                bsp_hpsend(gbsp, partner, C, size);
                bsp_oblsync(gbsp, 1);
            #pragma cll end D
            #pragma cll E E[0] + E[1] * n
                B = (Complex *)bspmsg_data(bsp_getmsg(gbsp, 0));
            #pragma cll end E
            }
            #pragma cll F F[0] + F[1] * n
                combine(A, B, C, W, n, stride);
            #pragma cll end F
        }
    } else {
        #pragma cll G G[0] + G[1] * N * log(N)
        seqDandCFFT(A, a, W, N, stride);
        #pragma cll end G
    }
}

int main(int argc, char **argv)
{
    t_bsp machine, *gbsp = &machine;
    bsp_begin(gbsp, &argc, &argv);
    int procs = bsp_nprocs(gbsp), pid = bsp_pid(gbsp);
    int maxn = argc > 1 ? atoi(argv[1]) : 1 << 17;
    if (maxn < 1024 || (maxn & (maxn - 1)) || (procs & (procs - 1)) || procs > maxn) {
        if (pid == 0)
            fprintf(stderr, "usage: mpirun -np P fft_pub [MAXN]: MAXN a power of two >= 1024, "
                            "P a power of two <= MAXN\n");
        bsp_end(gbsp);
        return 2;
    }
    Complex *a = malloc(sizeof *a * maxn), *A = malloc(sizeof *A * maxn);
    Complex *W = malloc(sizeof *W * maxn / 2);
    if (!a || !A || !W) {
        fprintf(stderr, "fft_pub: out of memory for N = %d\n", maxn);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    int N = maxn, rep = 0, last = 0;
    #pragma cll for(rep = 0; rep < REPS; rep++)
    #pragma cll for(N = 1024; N <= maxn; N *= 2)
    for (int k = 0; k < N; k++)
        a[k] = sin(0.001 * k) + I * cos(0.003 * k);
    for (int k = 0; k < N / 2; k++)
        W[k] = cexp(-2.0 * M_PI * I * k / N);
    /* working set: a and A (N complex each) and W (N/2), on every processor */
    #pragma cll sync f f[0]+f[1]*log(P)+\
       f[2]*(N/P)*log(N/P)+f[3]*N*(P-1)/P bytes 40*N
    parDandCFFT(A, a, W, N, 1, gbsp);
    #pragma cll end f
    last = N;
    #pragma cll end for
    #pragma cll end for
    if (pid == 0) {
        Complex sum = 0;
        for (int k = 0; k < last; k++)
            sum += A[k] * (k % 7 + 1);
        printf("fft_pub: N = %d, checksum %.6e %+.6e\n", last, creal(sum), cimag(sum));
    }
    #pragma cll report all
    free(a);
    free(A);
    free(W);
    bsp_end(gbsp);
    return rep < 0;
}
