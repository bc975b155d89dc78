/* The CALL paper's Fig. 4 and 5 as printed (line numbers dropped; its "..." filled in with
 * the least C that makes a program: the Complex type, declarations, main), including Fig.
 * 5's typo `#pragma ll end D` on line 53, which call reports (tests/test_pub_trace.py). */
#include "pub.h"
#include <math.h>
#include <stdlib.h>

typedef struct { double re, im; } Complex;

static void initialize(int N, Complex *a) { for (int k = 0; k < N; k++) { a[k].re = k; a[k].im = 0; } }
static void Roots(int n, Complex *W) { for (int k = 0; k < n; k++) { W[k].re = cos(M_PI * k / n); W[k].im = -sin(M_PI * k / n); } }
static void combine(Complex *A, Complex *B, Complex *C, Complex *W, int n) { (void)A, (void)B, (void)C, (void)W, (void)n; }
static void seqDandCFFT(Complex *A, Complex *a, Complex *W, int N, int stride) { (void)W, (void)stride; for (int k = 0; k < N; k++) A[k] = a[k]; }

#pragma cll parallel PUB gbsp\
   procs = 1:32:2

void parDandCFFT(Complex *A, Complex *a, Complex *W, int N, int stride, t_bsp *gbsp) {
    int n, size, partner, subgroup[2]; Complex *B, *C; t_bsp bsp_new; /* variable declarations */
    if (bsp_nprocs(gbsp) > 1) {
        if (N==1) {A[0].re = a[0].re; A[0].im = a[0].im;}
        else {
            #pragma cll A A[0]
            n = N/2; size = n * sizeof(Complex); B = A; C = A + n;
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
           #pragma ll end D
           #pragma cll E E[0] + E[1] * n
               B = (Complex *)bspmsg_data(bsp_getmsg(gbsp, 0));
           #pragma cll end E
           }
           #pragma cll F F[0] + F[1] * n
               combine(A, B, C, W, n);
           #pragma cll end F
           }
       } else
       #pragma cll G G[0] + G[1] * N * log(N)
       seqDandCFFT(A, a, W, N, stride);
       #pragma cll end G
   }

int main(int argc, char **argv) {
    t_bsp machine, *gbsp = &machine; int N, D = 0;
    Complex *A = malloc(262144 * sizeof *A), *a = malloc(262144 * sizeof *a), *W = malloc(131072 * sizeof *W);
    bsp_begin(gbsp, &argc, &argv);
#pragma cll for(N=1024; N<262144; N*=2)
initialize(N, a);
Roots(N/2, W);
#pragma cll sync f f[0]+f[1]*log(P)+\
   f[2]*(N/P)*log(N/P)+f[3]*N*(P-1)/P
parDandCFFT(A, a, W, N, 1, gbsp); (void)D; /* Fig. 4 passes D too, which Fig. 5 does not take */
#pragma cll end f
#pragma cll end for
#pragma cll report all
    bsp_end(gbsp);
    return 0;
}
