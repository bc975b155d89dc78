/* noise_stream.c -- the noise mode's memory-bound kernel (noise.h), repetitions OUTERMOST.
 * Sizes N = START (argument 3, default 4000001 doubles),
 * x1.19, odd, up to MAXN (argument 1, default 32000001); REPS (argument 2, default 15). Every
 * double is read from memory, at every N (noise.h).
 */
#include "noise.h"

int main(int argc, char **argv) {
    int maxn = int_argument(argc, argv, 1, 32000001, 1), reps = int_argument(argc, argv, 2, 15, 1);
    int first = int_argument(argc, argv, 3, 4000001, 1);
    double *ring = stream_ring(), sum = 0;
    int N = maxn, rep = 0;
    #pragma cll for(rep = 0; rep < reps; rep++)
    #pragma cll for(N = first; N <= maxn; N = next_size(N))
    #pragma cll stream stream[0] + stream[1]*N
    stream(ring, N);
    #pragma cll end stream
    sum += noise_result;
    #pragma cll end for
    #pragma cll end for
    printf("stream: checksum %.6g\n", sum);
    #pragma cll report all
    return rep < 0;
}
