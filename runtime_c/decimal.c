/* decimal.c -- numbers written as decimal text without printf, for the writers of many lines
 * (the records' integer columns, the PUB layer's `@step` lines: 960 ns a line with snprintf,
 * 171 ns with these, docs/pub.md "Cost"). Neither allocates nor takes a lock, so both may run
 * in a signal handler.
 */
#include "cll_internal.h"
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

/* 10^0 .. 10^22: every one a double exactly; and 10^0 .. 10^-13, the nearest doubles. */
static const double TEN[] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
                             1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
static const double TENTH[] = {1e0, 1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9,
                               1e-10, 1e-11, 1e-12, 1e-13};

/* |v| times 10^k (-22 <= k <= 22), rounded once (a product or quotient of doubles). */
static double scaled(double v, int k)
{
    return k >= 0 ? v * TEN[k] : v / TEN[-k];
}

/* The 9 significant digits of `a` (> 0) rounded to nearest, as `*m` (10^8 <= m < 10^9) and
 * the decimal exponent `*x` (a ~ m * 10^(x-8)); 0 when this cannot be told exactly: outside
 * 10^-13 .. 10^13, or `a` within a hair of half a unit of the ninth digit (printf's exact
 * rounding decides ties; here the scaled value may be off by 10^9 * 2^-53 ~ 1.1e-7). */
static int nine_digits(double a, int64_t *m, int *x)
{
    if (!(a >= 1e-13 && a < 1e13))
        return 0;
    int e = 0;
    while (e < 12 && a >= TEN[e + 1])
        e++;
    while (e > -13 && a < TENTH[-e])   /* an estimate (10^-n is no double), corrected below */
        e--;
    double s = scaled(a, 8 - e);
    if (s < 1e8) {
        e--;
        s = scaled(a, 8 - e);
    } else if (s >= 1e9) {
        e++;
        s = scaled(a, 8 - e);
    }
    double whole = floor(s), frac = s - whole;   /* s < 2^30: frac is exact */
    if (fabs(frac - 0.5) < 1e-6)
        return 0;
    *m = (int64_t)whole + (frac > 0.5);
    if (*m == 1000000000) {   /* 999999999.5 and up: one digit more */
        *m = 100000000;
        e++;
    }
    *x = e;
    return 1;
}

char *cll_put_g9(char *p, double v)
{
    int64_t m;
    int x;
    if (v == 0 && !signbit(v)) {
        *p++ = '0';
        return p;
    }
    if (!nine_digits(fabs(v), &m, &x))
        return p + snprintf(p, 32, "%.9g", v);
    char d[9];
    for (int i = 8; i >= 0; i--, m /= 10)
        d[i] = (char)('0' + m % 10);
    int last = 8;                         /* %g drops trailing zeros */
    while (last > 0 && d[last] == '0')
        last--;
    if (v < 0)
        *p++ = '-';
    if (x < -4 || x >= 9) {               /* %e style: d.ddde-05 */
        *p++ = d[0];
        if (last > 0)
            *p++ = '.';
        for (int i = 1; i <= last; i++)
            *p++ = d[i];
        *p++ = 'e';
        *p++ = x < 0 ? '-' : '+';
        int ax = x < 0 ? -x : x;
        *p++ = (char)('0' + ax / 10);
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
