/* noise_chain.c -- the noise mode's compute-bound kernel (noise.h), repetitions OUTERMOST.
 * Sizes N = START (argument 3, default 121001), x1.19, odd, up to MAXN (argument 1, default
 * 1000001); REPS (argument 2, default 11) repetitions.
 */
#include "noise.h"

int main(int argc, char **argv) {
    int maxn = int_argument(argc, argv, 1, 1000001, 1), reps = int_argument(argc, argv, 2, 11, 1);
    int first = int_argument(argc, argv, 3, 121001, 1);
    double sum = 0;
    int N = maxn, rep = 0;
    #pragma cll for(rep = 0; rep < reps; rep++)
    #pragma cll for(N = first; N <= maxn; N = next_size(N))
    #pragma cll chain chain[0] + chain[1]*N
    chain(N);
    #pragma cll end chain
    sum += noise_result;
    #pragma cll end for
    #pragma cll end for
    printf("chain: checksum %.6g\n", sum);
    #pragma cll report all
    return rep < 0;
}
