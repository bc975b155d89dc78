/* msort.c -- sort: top-down merge sort of N seeded random integers (N log N comparisons).
 * Sizes N = 30001, 35701, ... (odd, x1.19) up to MAXN (argument 1, default 1000001); REPS
 * (argument 2, default 7) repetitions as the OUTER sampling loop.
 */
#include "sweep.h"

/* Sort a[0..n) using tmp[0..n) as scratch. */
static void merge_sort(int *a, int *tmp, int n) {
    if (n < 2)
        return;
    int half = n / 2;
    merge_sort(a, tmp, half);
    merge_sort(a + half, tmp, n - half);
    int i = 0, j = half, k = 0;
    while (i < half && j < n)
        tmp[k++] = a[j] < a[i] ? a[j++] : a[i++];
    while (i < half)
        tmp[k++] = a[i++];
    while (j < n)
        tmp[k++] = a[j++];
    for (k = 0; k < n; k++)
        a[k] = tmp[k];
}

int main(int argc, char **argv) {
    int maxn = int_argument(argc, argv, 1, 1000001, 30001), reps = int_argument(argc, argv, 2, 7, 1);
    int *a = allocate(maxn, sizeof *a), *tmp = allocate(maxn, sizeof *tmp);
    long long sum = 0;
    int N = maxn, rep = 0;
    #pragma cll for(rep = 0; rep < reps; rep++)
    #pragma cll for(N = 30001; N <= maxn; N = next_size(N))
    unsigned long long state = 2463534242ULL + N;
    for (int i = 0; i < N; i++)
        a[i] = (int)(next_random(&state) >> 33);
    #pragma cll msort msort[0] + msort[1]*N*log(N) bytes 8*N
    merge_sort(a, tmp, N);
    #pragma cll end msort
    sum += a[N / 2];
    #pragma cll end for
    #pragma cll end for
    printf("msort: checksum %lld\n", sum);
    #pragma cll report all
    return rep < 0;
}
