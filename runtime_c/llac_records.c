/* Bulk conversion of trace records for llac's reader (see llac/records.py).
 *
 * The reader has already chosen well-formed lines; this converts their values in one pass,
 * about twice as fast as Python's float() per word, and checks each line again: a name,
 * exactly `ncols` values, then the newline. A value must be a plain decimal number (digits,
 * '.', 'e', signs) or nan/inf/infinity, read with strtod in the "C" locale (correctly
 * rounded, like float()). Anything else sends the lines back to the Python path, which
 * says what is wrong, so both paths accept the same numbers.
 */
#define _GNU_SOURCE
#include <locale.h>
#include <stdlib.h>
#include <strings.h>

#include "llac_records.h"

static int blank(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

static int plain_number(const char *p, const char *q)
{
    for (; p < q; p++)
        if (!((*p >= '0' && *p <= '9') || *p == '.' || *p == 'e' || *p == 'E' || *p == '+' || *p == '-'))
            return 0;
    return 1;
}

/* Clinger's fast path: a decimal whose digits make an integer m <= 2^53 and whose exponent
 * e has |e| <= 22 is m * 10^e or m / 10^-e, both exact operands, so one IEEE operation gives
 * the correctly rounded double, as strtod does. Returns 0 when [p, q) is not such a number
 * (the caller then uses strtod). Most trace values (ranks, sizes, %.9e times) qualify. */
static int fast_decimal(const char *p, const char *q, double *value)
{
    static const double powers[] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
                                    1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    unsigned long long m = 0;
    int negative = 0, digits = 0, scale = 0, exponent = 0, exponent_negative = 0, seen_point = 0;
    double x;
    if (p < q && (*p == '+' || *p == '-'))
        negative = *p++ == '-';
    for (; p < q && ((*p >= '0' && *p <= '9') || (*p == '.' && !seen_point)); p++) {
        if (*p == '.') {
            seen_point = 1;
            continue;
        }
        if (++digits > 16)
            return 0;
        m = m * 10 + (unsigned long long)(*p - '0');
        scale -= seen_point;
    }
    if (digits == 0 || m > (1ULL << 53))
        return 0;
    if (p < q && (*p == 'e' || *p == 'E')) {
        int exponent_digits = 0;
        if (++p < q && (*p == '+' || *p == '-'))
            exponent_negative = *p++ == '-';
        for (; p < q && *p >= '0' && *p <= '9' && exponent_digits < 4; p++, exponent_digits++)
            exponent = exponent * 10 + (*p - '0');
        if (exponent_digits == 0)
            return 0;
    }
    if (p != q)
        return 0;
    exponent = scale + (exponent_negative ? -exponent : exponent);
    if (exponent < -22 || exponent > 22)
        return 0;
    x = exponent < 0 ? (double)m / powers[-exponent] : (double)m * powers[exponent];
    *value = negative ? -x : x;
    return 1;
}

static int nan_or_inf(const char *p, const char *q)
{
    size_t n;
    if (p < q && (*p == '+' || *p == '-'))
        p++;
    n = (size_t)(q - p);
    return (n == 3 && (!strncasecmp(p, "nan", 3) || !strncasecmp(p, "inf", 3)))
        || (n == 8 && !strncasecmp(p, "infinity", 8));
}

/* Convert `nlines` lines of buf[0..len) (each: a name if `named`, `ncols` values, '\n')
 * into out (row-major, nlines x ncols). Returns nlines, or the index of the first line that
 * is not such a record (then out is incomplete), or -1 when the C locale cannot be made. */
long long llac_parse_records(const char *buf, size_t len, long long nlines, int named, int ncols, double *out)
{
    static locale_t c_locale;
    const char *p = buf, *end = buf + len;
    long long line;
    int col;
    if (!c_locale && !(c_locale = newlocale(LC_ALL_MASK, "C", (locale_t)0)))
        return -1;
    for (line = 0; line < nlines; line++) {
        while (named && p < end && *p != '\n' && !blank(*p))     /* the name */
            p++;
        for (col = 0; col < ncols; col++) {
            const char *q;
            char *stop;
            while (p < end && blank(*p))
                p++;
            for (q = p; q < end && *q != '\n' && !blank(*q); q++)
                ;
            if (q == p || (!plain_number(p, q) && !nan_or_inf(p, q)))
                return line;
            if (!fast_decimal(p, q, out)) {
                *out = strtod_l(p, &stop, c_locale);
                if (stop != q)
                    return line;
            }
            out++;
            p = q;
        }
        while (p < end && blank(*p))
            p++;
        if (p == end || *p != '\n')
            return line;
        p++;
    }
    return nlines;
}
