/* radix.c -- distribution sort: least-significant-digit radix sort of N seeded random 32-bit
 * keys, four passes of 8-bit digits (count, prefix sum, scatter into a buffer); O(N). Sizes
 * N = 200001, 238001, ... (odd, x1.19) up to MAXN (argument 1, default 21918059); REPS
 * (argument 2, default 5) repetitions as the OUTER sampling loop.
 */
#include "sweep.h"

#define DIGITS 256

/* Sort a[0..n) in place; buffer: room for n. */
static void radix_sort(unsigned *a, unsigned *buffer, int n) {
    for (int shift = 0; shift < 32; shift += 8) {
        int start[DIGITS + 1] = {0};
        for (int i = 0; i < n; i++)
            start[((a[i] >> shift) & (DIGITS - 1)) + 1]++;
        for (int d = 0; d < DIGITS; d++)
            start[d + 1] += start[d];
        for (int i = 0; i < n; i++)
            buffer[start[(a[i] >> shift) & (DIGITS - 1)]++] = a[i];
        unsigned *t = a;            /* four passes: the sorted keys end in a */
        a = buffer;
        buffer = t;
    }
}

int main(int argc, char **argv) {
    int maxn = int_argument(argc, argv, 1, 21918059, 200001), reps = int_argument(argc, argv, 2, 5, 1);
    unsigned *a = allocate(maxn, sizeof *a), *buffer = allocate(maxn, sizeof *buffer);
    long long sum = 0;
    int N = maxn, rep = 0;
    #pragma cll for(rep = 0; rep < reps; rep++)
    #pragma cll for(N = 200001; N <= maxn; N = next_size(N))
    unsigned long long state = 6364136223846793005ULL + N;
    for (int i = 0; i < N; i++)
        a[i] = (unsigned)(next_random(&state) >> 32);
    #pragma cll radix radix[0] + radix[1]*N bytes 8*N
    radix_sort(a, buffer, N);
    #pragma cll end radix
    sum += a[N / 3] >> 8;
    #pragma cll end for
    #pragma cll end for
    printf("radix: checksum %lld\n", sum);
    #pragma cll report all
    return rep < 0;
}
