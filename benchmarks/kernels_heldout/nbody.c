/* nbody.c -- all pairs: the gravitational accelerations of N bodies by direct summation over
 * every pair (Plummer softening), the force step of an N-body time step; N*N interactions.
 * Bodies at seeded random places in the unit cube. Sizes N = 201, 239, ... (odd, x1.19) up to
 * MAXN (argument 1, default 18659); REPS (argument 2, default 5) repetitions as the OUTER
 * sampling loop.
 */
#include <math.h>
#include "sweep.h"

#define SOFTENING2 1e-6     /* squared softening length */

struct bodies {
    double *x, *y, *z, *mass;    /* structure of arrays */
    double *ax, *ay, *az;        /* the accelerations computed */
};

/* The acceleration of each of bodies 0..n-1 from all the others (G = 1). */
static void accelerations(const struct bodies *b, int n) {
    for (int i = 0; i < n; i++) {
        double sx = 0, sy = 0, sz = 0, xi = b->x[i], yi = b->y[i], zi = b->z[i];
        for (int j = 0; j < n; j++) {           /* j == i adds 0: dx = dy = dz = 0 */
            double dx = b->x[j] - xi, dy = b->y[j] - yi, dz = b->z[j] - zi;
            double r2 = dx * dx + dy * dy + dz * dz + SOFTENING2;
            double s = b->mass[j] / (r2 * sqrt(r2));
            sx += s * dx;
            sy += s * dy;
            sz += s * dz;
        }
        b->ax[i] = sx;
        b->ay[i] = sy;
        b->az[i] = sz;
    }
}

int main(int argc, char **argv) {
    int maxn = int_argument(argc, argv, 1, 18659, 201), reps = int_argument(argc, argv, 2, 5, 1);
    struct bodies b = {allocate(maxn, sizeof(double)), allocate(maxn, sizeof(double)),
                       allocate(maxn, sizeof(double)), allocate(maxn, sizeof(double)),
                       allocate(maxn, sizeof(double)), allocate(maxn, sizeof(double)),
                       allocate(maxn, sizeof(double))};
    double sum = 0;
    int N = maxn, rep = 0;
    #pragma cll for(rep = 0; rep < reps; rep++)
    #pragma cll for(N = 201; N <= maxn; N = next_size(N))
    unsigned long long state = 2862933555777941757ULL + N;
    for (int i = 0; i < N; i++) {
        b.x[i] = (next_random(&state) >> 11) * 0x1.0p-53;
        b.y[i] = (next_random(&state) >> 11) * 0x1.0p-53;
        b.z[i] = (next_random(&state) >> 11) * 0x1.0p-53;
        b.mass[i] = 1.0 / N;
    }
    #pragma cll nbody nbody[0] + nbody[1]*N*N bytes 56*N
    accelerations(&b, N);
    #pragma cll end nbody
    sum += b.ax[N / 2] + b.ay[N / 3] + b.az[N / 5];
    #pragma cll end for
    #pragma cll end for
    printf("nbody: checksum %.6g\n", sum);
    #pragma cll report all
    return rep < 0;
}
