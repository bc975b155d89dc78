/* fft_mpi.c -- the divide-and-conquer FFT of the CALL paper (Fig. 4 and 5) on MPI.
 *
 * The input a and the result A are replicated on every rank. A machine of P > 1 ranks splits
 * in two halves (MPI_Comm_split); the lower half transforms the even elements, the upper half
 * the odd ones, recursively; then each rank exchanges its half of the result with its partner
 * in the other half (MPI_Sendrecv) and combines them. A machine of one rank runs the
 * sequential FFT. The paper's experiments A..G time the steps, f the whole transform:
 *   f = f[0] + f[1]*log(P) + f[2]*(N/P)*log(N/P) + f[3]*N*(P-1)/P
 * The sampling loop sweeps N = 2^10 ... MAXN (argument 1, default 2^17), REPS times each
 * (repetitions outermost: each round sweeps every size; docs/pragma-language.md, Measurement order).
 * P must be a power of two. Built as plain C with mpicc (pragmas ignored) it transforms one
 * signal of MAXN points and prints the same checksum.
 */
#include <complex.h>
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REPS 3

#pragma cll parallel MPI procs = 1:8:2

/* A[0..n) and A[n..2n) are the transforms of the even and odd parts: combine in place.
 * W[k*stride] = exp(-2 pi i k / 2n). */
static void combine(double complex *A, const double complex *W, int n, int stride) {
    for (int k = 0; k < n; k++) {
        double complex even = A[k], odd = W[(size_t)k * stride] * A[k + n];
        A[k] = even + odd;
        A[k + n] = even - odd;
    }
}

/* A[0..N) = DFT of a[0], a[stride], ..., sequentially. */
static void seq_fft(double complex *A, const double complex *a, const double complex *W, int N,
                    int stride) {
    if (N == 1) {
        A[0] = a[0];
        return;
    }
    seq_fft(A, a, W, N / 2, 2 * stride);
    seq_fft(A + N / 2, a + stride, W, N / 2, 2 * stride);
    combine(A, W, N / 2, stride);
}

/* A[0..N) = DFT of a[0], a[stride], ... on the ranks of comm (every rank gets all of A);
 * msg is scratch for N/2 points. */
static void par_fft(double complex *A, const double complex *a, const double complex *W, int N,
                    int stride, double complex *msg, MPI_Comm comm) {
    int procs, me;
    MPI_Comm_size(comm, &procs);
    MPI_Comm_rank(comm, &me);
    if (procs > 1) {
        if (N == 1) {
            A[0] = a[0];
        } else {
            int n, size, half, partner;
            double complex *B, *C;
            MPI_Comm sub;
            #pragma cll A A[0]
            n = N / 2; size = n * (int)sizeof(double complex); B = A; C = A + n;
            #pragma cll end A
            #pragma cll B B[0]
            half = procs / 2;
            MPI_Comm_split(comm, me >= half, me, &sub);
            #pragma cll end B
            if (me < half) {
                par_fft(B, a, W, n, stride * 2, msg, sub);
                #pragma cll C C[0]
                partner = me + half;
                MPI_Comm_free(&sub);
                #pragma cll end C
                #pragma cll D D[0] + D[1]*size
                MPI_Sendrecv(B, size, MPI_BYTE, partner, 0, msg, size, MPI_BYTE, partner, 0, comm,
                             MPI_STATUS_IGNORE);
                #pragma cll end D
                #pragma cll E E[0] + E[1]*n
                memcpy(C, msg, (size_t)size);
                #pragma cll end E
            } else {
                par_fft(C, a + stride, W, n, stride * 2, msg, sub);
                #pragma cll C C[0]
                partner = me - half;
                MPI_Comm_free(&sub);
                #pragma cll end C
                #pragma cll D D[0] + D[1]*size
                MPI_Sendrecv(C, size, MPI_BYTE, partner, 0, msg, size, MPI_BYTE, partner, 0, comm,
                             MPI_STATUS_IGNORE);
                #pragma cll end D
                #pragma cll E E[0] + E[1]*n
                memcpy(B, msg, (size_t)size);
                #pragma cll end E
            }
            #pragma cll F F[0] + F[1]*n
            combine(A, W, n, stride);
            #pragma cll end F
        }
    } else {
        #pragma cll G G[0] + G[1]*N*log(N)
        seq_fft(A, a, W, N, stride);
        #pragma cll end G
    }
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, procs;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &procs);
    int maxn = argc > 1 ? atoi(argv[1]) : 1 << 17;
    if (maxn < 1024 || (maxn & (maxn - 1)) || (procs & (procs - 1)) || procs > maxn) {
        if (rank == 0)
            fprintf(stderr, "usage: mpirun -np P fft_mpi [MAXN]: MAXN a power of two >= 1024, "
                            "P a power of two <= MAXN\n");
        MPI_Finalize();
        return 2;
    }
    double complex *a = malloc(sizeof *a * maxn), *A = malloc(sizeof *A * maxn);
    double complex *W = malloc(sizeof *W * maxn / 2), *msg = malloc(sizeof *msg * maxn / 2);
    if (!a || !A || !W || !msg) {
        fprintf(stderr, "fft_mpi: out of memory for N = %d\n", maxn);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    int N = maxn, rep = 0, last = 0;
    #pragma cll for(rep = 0; rep < REPS; rep++)
    #pragma cll for(N = 1024; N <= maxn; N *= 2)
    for (int k = 0; k < N; k++)
        a[k] = sin(0.001 * k) + I * cos(0.003 * k);
    for (int k = 0; k < N / 2; k++)
        W[k] = cexp(-2.0 * M_PI * I * k / N);
    #pragma cll sync f f[0]+f[1]*log(P)+f[2]*(N/P)*log(N/P)+f[3]*N*(P-1)/P
    par_fft(A, a, W, N, 1, msg, MPI_COMM_WORLD);
    #pragma cll end f
    last = N;
    #pragma cll end for
    #pragma cll end for
    if (rank == 0) {
        double complex sum = 0;
        for (int k = 0; k < last; k++)
            sum += A[k] * (k % 7 + 1);
        printf("fft_mpi: N = %d, checksum %.6e %+.6e\n", last, creal(sum), cimag(sum));
    }
    #pragma cll report all
    free(a);
    free(A);
    free(W);
    free(msg);
    MPI_Finalize();
    return rep < 0;
}
