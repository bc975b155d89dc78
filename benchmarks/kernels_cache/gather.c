/* gather.c -- a gather sum s += x[idx[i]] over N doubles, idx a random permutation of 0..N-1
 * (independent random loads, the index read in sequence): working set 8*N + 4*N bytes. Sizes
 * N = 683 (8 KiB), 813, ... (odd, x1.19) up to MAXN (argument 1, default 11184811: 128 MiB);
 * REPS (argument 2, default 5) repetitions as the OUTER sampling loop. The permutation of each
 * size is built before its unmeasured pass. Held aside (session 25).
 */
#include "../kernels/sweep.h"

static __attribute__((noinline)) double gather(const double *x, const int *idx, int n) {
    double s0 = 0, s1 = 0;
    int i = 0;
    for (; i + 2 <= n; i += 2) {
        s0 += x[idx[i]];
        s1 += x[idx[i + 1]];
    }
    for (; i < n; i++)
        s0 += x[idx[i]];
    return s0 + s1;
}

/* idx[0..n-1]: a random permutation of 0..n-1 (Fisher-Yates, a fixed generator). */
static void permutation(int *idx, int n) {
    unsigned long state = 88172645463325252UL;
    for (int i = 0; i < n; i++)
        idx[i] = i;
    for (int i = n - 1; i > 0; i--) {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        int j = (int)(state % (unsigned long)(i + 1)), t = idx[i];
        idx[i] = idx[j];
        idx[j] = t;
    }
}

int main(int argc, char **argv) {
    int maxn = int_argument(argc, argv, 1, 11184811, 683), reps = int_argument(argc, argv, 2, 5, 1);
    double *x = allocate(maxn, sizeof *x), total = 0;
    int *idx = allocate(maxn, sizeof *idx);
    for (int i = 0; i < maxn; i++)
        x[i] = i % 17;
    int N = maxn, rep = 0;
    #pragma cll for(rep = 0; rep < reps; rep++)
    #pragma cll for(N = 683; N <= maxn; N = next_size(N))
    permutation(idx, N);
    total += gather(x, idx, N);
    #pragma cll gather gather[0] + gather[1]*N bytes 12*N
    total += gather(x, idx, N);
    #pragma cll end gather
    #pragma cll end for
    #pragma cll end for
    printf("gather: total %g\n", total);
    #pragma cll report all
    return rep < 0;
}
