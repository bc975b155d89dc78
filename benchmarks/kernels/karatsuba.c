/* karatsuba.c -- recursive divide and conquer: Karatsuba multiplication of two polynomials of
 * N coefficients (three half-size products per level: N^log2(3)), schoolbook below 32.
 * Sizes N = 501, 597, ... (odd, x1.19) up to MAXN (argument 1, default 55267); REPS
 * (argument 2, default 7) repetitions as the OUTER sampling loop.
 */
#include "sweep.h"

/* r[0..2n-1) = a[0..n) * b[0..n); w: scratch of 8n doubles. */
static void karatsuba(const double *a, const double *b, int n, double *r, double *w) {
    if (n <= 32) {
        for (int i = 0; i < 2 * n - 1; i++)
            r[i] = 0;
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++)
                r[i + j] += a[i] * b[j];
        return;
    }
    int m = n / 2, h = n - m;
    double *sa = w, *sb = w + h, *mid = w + 2 * h, *next = w + 4 * h;
    for (int i = 0; i < h; i++) {
        sa[i] = a[m + i] + (i < m ? a[i] : 0);
        sb[i] = b[m + i] + (i < m ? b[i] : 0);
    }
    karatsuba(a, b, m, r, next);
    r[2 * m - 1] = 0;
    karatsuba(a + m, b + m, h, r + 2 * m, next);
    karatsuba(sa, sb, h, mid, next);
    for (int i = 0; i < 2 * m - 1; i++)
        mid[i] -= r[i];
    for (int i = 0; i < 2 * h - 1; i++)
        mid[i] -= r[2 * m + i];
    for (int i = 0; i < 2 * h - 1; i++)
        r[m + i] += mid[i];
}

int main(int argc, char **argv) {
    int maxn = int_argument(argc, argv, 1, 55267, 501), reps = int_argument(argc, argv, 2, 7, 1);
    double *a = allocate(maxn, sizeof *a), *b = allocate(maxn, sizeof *b);
    double *r = allocate(2 * (size_t)maxn, sizeof *r), *w = allocate(8 * (size_t)maxn + 64, sizeof *w);
    double sum = 0;
    for (int i = 0; i < maxn; i++) {
        a[i] = 1.0 / (1 + i % 7);
        b[i] = 1.0 / (1 + i % 5);
    }
    int N = maxn, rep = 0;
    #pragma cll for(rep = 0; rep < reps; rep++)
    #pragma cll for(N = 501; N <= maxn; N = next_size(N))
    #pragma cll karatsuba karatsuba[0] + karatsuba[1]*N^log2(3) bytes 96*N
    karatsuba(a, b, N, r, w);
    #pragma cll end karatsuba
    sum += r[N - 1];
    #pragma cll end for
    #pragma cll end for
    printf("karatsuba: checksum %.6g\n", sum);
    #pragma cll report all
    return rep < 0;
}
