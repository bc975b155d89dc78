/* bsearch.c -- QUERIES binary searches of random keys in a sorted array of N doubles: each
 * search is a chain of log2(N) dependent loads, the searches are independent of each other.
 * Working set 8*N bytes. Sizes N = 129, 155, ... (odd, x1.19) up to MAXN (argument 1, default
 * 16777217: 128 MiB); REPS (argument 2, default 5) repetitions as the OUTER sampling loop. A
 * linear read of the array precedes each measurement, so that an array that fits a cache level
 * is in it.
 */
#include "../kernels/sweep.h"

#define QUERIES 4096

static __attribute__((noinline)) double touch(const double *a, int n) {
    double sum = 0;
    for (int i = 0; i < n; i++)
        sum += a[i];
    return sum;
}

/* How many of a[0..n) are below each key, summed over the keys. */
static __attribute__((noinline)) long search(const double *a, int n, const double *keys) {
    long found = 0;
    for (int q = 0; q < QUERIES; q++) {
        int low = 0, high = n;
        while (low < high) {
            int middle = low + (high - low) / 2;
            if (a[middle] < keys[q])
                low = middle + 1;
            else
                high = middle;
        }
        found += low;
    }
    return found;
}

int main(int argc, char **argv) {
    int maxn = int_argument(argc, argv, 1, 16777217, 129), reps = int_argument(argc, argv, 2, 5, 1);
    double *a = allocate(maxn, sizeof *a), keys[QUERIES], check = 0;
    unsigned long long state = 88172645463325252ULL;
    for (int i = 0; i < maxn; i++)
        a[i] = i;
    long found = 0;
    int N = maxn, rep = 0;
    #pragma cll for(rep = 0; rep < reps; rep++)
    #pragma cll for(N = 129; N <= maxn; N = next_size(N))
    for (int q = 0; q < QUERIES; q++)
        keys[q] = (double)(next_random(&state) % (unsigned long long)N) + 0.5;
    check += touch(a, N);
    #pragma cll bsearch bsearch[0] + bsearch[1]*log(N) bytes 8*N
    found += search(a, N, keys);
    #pragma cll end bsearch
    #pragma cll end for
    #pragma cll end for
    printf("bsearch: found %ld (check %g)\n", found, check);
    #pragma cll report all
    return rep < 0;
}
