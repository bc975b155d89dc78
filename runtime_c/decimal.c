/* decimal.c -- numbers written as decimal text without printf, for the writers of many lines
 * (the records: their integer columns and their times, "%.17g", 840 ns a record with
 * sprintf; the PUB layer's `@step` lines, "%.9g": 960 ns a line with snprintf, 171 ns with
 * these, docs/pub.md "Cost"). None allocates or takes a lock, so all may run in a signal
 * handler (but for the rare value handed to snprintf).
 */
#include "cll_internal.h"
#include <float.h>
#include <math.h>
#include <stdio.h>

char *cll_put_int(char *p, int64_t v)
{
    char tmp[24];
    int n = 0;
    uint64_t u = v < 0 ? -(uint64_t)v : (uint64_t)v;
    do
        tmp[n++] = (char)('0' + u % 10);
    while (u /= 10);
    if (v < 0)
        *p++ = '-';
    while (n)
        *p++ = tmp[--n];
    return p;
}

/* 10^0 .. 10^27: each one a long double exactly (5^27 < 2^63), and 10^n for the digits. */
static const long double TEN[] = {1e0L, 1e1L, 1e2L, 1e3L, 1e4L, 1e5L, 1e6L, 1e7L, 1e8L, 1e9L,
                                  1e10L, 1e11L, 1e12L, 1e13L, 1e14L, 1e15L, 1e16L, 1e17L, 1e18L,
                                  1e19L, 1e20L, 1e21L, 1e22L, 1e23L, 1e24L, 1e25L, 1e26L, 1e27L};
#define MAX_TEN 27

/* The `n` (9 or 17) significant digits of `a` (> 0) rounded to nearest, as `*m`
 * (10^(n-1) <= m < 10^n) and the decimal exponent `*x` (a ~ m * 10^(x-n+1)); 0 when this
 * cannot be told exactly: when 10^(n-1-x) is no exact long double, or when `a` lies within a
 * hair of half a unit of the last digit (printf's exact rounding decides ties). `a` scaled by
 * an exact power of ten is rounded once, by at most half an ulp of a long double: 2^-64
 * relative (x86's 64-bit mantissa), 0.004 of the 17th digit's unit and 5e-11 of the 9th's;
 * the margins below are 5 and 20000 times that. With a long double no wider than a double,
 * 17 digits are never told here and 9 digits err by 1.1e-7 at most, within their margin. */
static int significant(double v, int n, int64_t *m, int *x)
{
    long double a = fabsl((long double)v);
    if (!(a > 0) || isinf(a) || (n > 9 && LDBL_MANT_DIG < 64))
        return 0;
    int b;
    frexpl(a, &b);                                        /* 2^(b-1) <= a < 2^b */
    int e = (int)floor((b - 1) * 0.30102999566398120);   /* 10^e <= a, or one too low */
    for (int tries = 0; tries < 3; tries++) {
        int k = n - 1 - e;
        if (k > MAX_TEN || k < -MAX_TEN)
            return 0;
        long double s = k >= 0 ? a * TEN[k] : a / TEN[-k];
        if (s < TEN[n - 1]) {
            e--;
            continue;
        }
        if (s >= TEN[n]) {
            e++;
            continue;
        }
        long double whole = floorl(s), frac = s - whole;  /* s < 2^57: frac is exact */
        if (fabsl(frac - 0.5L) < (n > 9 ? 0.02L : 1e-6L))
            return 0;
        *m = (int64_t)whole + (frac > 0.5L);
        if (*m == (int64_t)TEN[n]) {                      /* ...9.5 and up: one digit more */
            *m = (int64_t)TEN[n - 1];
            e++;
        }
        *x = e;
        return 1;
    }
    return 0;
}

/* `v` as printf's "%.<n>g" writes it (n = 9 or 17), at `p`; the end of the text. */
static char *put_g(char *p, double v, int n)
{
    int64_t m;
    int x;
    if (v == 0 && !signbit(v)) {
        *p++ = '0';
        return p;
    }
    if (!significant(v, n, &m, &x))
        return p + snprintf(p, 40, "%.*g", n, v);
    char d[17];
    for (int i = n - 1; i >= 0; i--, m /= 10)
        d[i] = (char)('0' + m % 10);
    int last = n - 1;                     /* %g drops trailing zeros */
    while (last > 0 && d[last] == '0')
        last--;
    if (v < 0)
        *p++ = '-';
    if (x < -4 || x >= n) {               /* %e style: d.ddde-05 */
        *p++ = d[0];
        if (last > 0)
            *p++ = '.';
        for (int i = 1; i <= last; i++)
            *p++ = d[i];
        *p++ = 'e';
        *p++ = x < 0 ? '-' : '+';
        int ax = x < 0 ? -x : x;
        if (ax >= 100)
            *p++ = (char)('0' + ax / 100);
        *p++ = (char)('0' + ax / 10 % 10);
        *p++ = (char)('0' + ax % 10);
    } else if (x >= 0) {                  /* %f style: ddd.ddd */
        for (int i = 0; i <= x; i++)
            *p++ = d[i];
        if (last > x)
            *p++ = '.';
        for (int i = x + 1; i <= last; i++)
            *p++ = d[i];
    } else {                              /* 0.000ddd */
        *p++ = '0';
        *p++ = '.';
        for (int i = x + 1; i < 0; i++)
            *p++ = '0';
        for (int i = 0; i <= last; i++)
            *p++ = d[i];
    }
    return p;
}

char *cll_put_g9(char *p, double v)
{
    return put_g(p, v, 9);
}

char *cll_put_g17(char *p, double v)
{
    return put_g(p, v, 17);
}
