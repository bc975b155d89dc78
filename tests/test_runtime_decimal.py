"""The runtime's decimal writers (runtime_c/decimal.c), which the trace's records and the PUB
layer's `@step` lines use instead of snprintf: cll_put_g9 and cll_put_g17 must write exactly
what printf's %.9g and %.17g write, for every double (those they do not format themselves they
hand to snprintf), and cll_put_int what %lld writes. Compared with glibc's snprintf on millions
of values in a real gcc build: random doubles over 30 decades, decimals of 10 significant
digits (their tenth digit 5: the ties and near-ties of the ninth), times as the runtime makes
them (ticks times seconds per tick), integers, the edges of each decade, and the special
values."""
from support.runtime import build, run

CHECK = r"""
#include "cll_mpi_support.h"
#include <math.h>
#include <stdio.h>
#include <string.h>

static unsigned long long state = 88172645463325252ULL;
static unsigned long long next(void) { state ^= state << 13; state ^= state >> 7; state ^= state << 17; return state; }

static long checked, wrong;
static void check(double v)
{
    char mine[64], theirs[64];
    *cll_put_g9(mine, v) = '\0';
    snprintf(theirs, sizeof theirs, "%.9g", v);
    checked++;
    if (strcmp(mine, theirs) && wrong++ < 10)
        printf("g9 %.17g: %s, printf %s\n", v, mine, theirs);
    *cll_put_g17(mine, v) = '\0';
    snprintf(theirs, sizeof theirs, "%.17g", v);
    checked++;
    if (strcmp(mine, theirs) && wrong++ < 10)
        printf("g17 %.17g: %s, printf %s\n", v, mine, theirs);
}

static void check_int(long long v)
{
    char mine[32], theirs[32];
    *cll_put_int(mine, v) = '\0';
    snprintf(theirs, sizeof theirs, "%lld", v);
    checked++;
    if (strcmp(mine, theirs) && wrong++ < 10)
        printf("int %s, printf %s\n", mine, theirs);
}

int main(void)
{
    const double special[] = {0.0, -0.0, INFINITY, -INFINITY, NAN, 5e-324, 1e-13, 1e13, 0.5, 1.5,
                              999999999.5, 9999999995.0, 0.00009999999995, 123456789.0};
    for (size_t i = 0; i < sizeof special / sizeof *special; i++)
        check(special[i]);
    for (int e = -16; e <= 16; e++)                  /* each decade's edge and its neighbours */
        for (int s = -1; s <= 1; s += 2) {
            double edge = s * pow(10, e);
            check(edge); check(nextafter(edge, 0)); check(nextafter(edge, 2 * edge));
            check(s * (pow(10, e) - 0.5 * pow(10, e - 9)));
        }
    for (long i = 0; i < 1000000; i++) {
        unsigned long long r = next();
        double random = ldexp((double)(r >> 11), (int)(next() % 100) - 100 - 3);  /* 2^-156 .. 2^-4 * 2^53 */
        check(r & 1 ? random : -random);
        long long ten = (long long)(next() % 9000000000ULL) + 1000000000LL;      /* 10 digits */
        ten = ten / 10 * 10 + 5;                                                  /* tenth digit 5 */
        check((double)ten / pow(10, (int)(next() % 24)));
        check((double)(long long)(next() >> 20));
        check((double)(next() >> 30) * (1.0 / (2.0e9 + (double)(next() % 1000000000ULL))));  /* a time */
        check((double)(next() >> 34) * 1e-9);                                   /* a time of ns ticks */
        check_int((long long)next());
    }
    check_int(0); check_int(-1); check_int(-9223372036854775807LL - 1);
    printf("%ld checked, %ld wrong\n", checked, wrong);
    return wrong != 0;
}
"""


def test_put_g9_and_g17_write_what_printf_writes_for_every_kind_of_double(tmp_path):
    exe = build(tmp_path, {"check.c": CHECK}, exe="check")
    done = run(exe, timeout=120)
    assert done.returncode == 0 and done.stdout.endswith(" checked, 0 wrong\n"), done.stdout + done.stderr
    assert int(done.stdout.split()[-4]) > 10_000_000
