/* noise_chain_inner.c -- noise_chain.c with the repetitions INSIDE the size sweep (each size's
 * repetitions run back to back): the order that a co-runner starting mid-sweep turns into a
 * false regime change. Same arguments as noise_chain.c.
 */
#include "noise.h"

int main(int argc, char **argv) {
    int maxn = int_argument(argc, argv, 1, 1000001, 1), reps = int_argument(argc, argv, 2, 11, 1);
    int first = int_argument(argc, argv, 3, 121001, 1);
    double sum = 0;
    int N = maxn, rep = 0;
    #pragma cll for(N = first; N <= maxn; N = next_size(N))
    #pragma cll for(rep = 0; rep < reps; rep++)
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
