/* bench_step.c -- the PUB layer's `@step` writer (cll_pub.c's lines(), static: the layer is
 * included whole) on N synthetic supersteps of 2 machines, 0 to 3 partners each, written
 * to a file; prints the best of 5 times per line in ns. Usage: bench_step [N [FILE]]. */
#include CLL_PUB_C
#include <stdio.h>

static FILE *out;

static int sink(const char *text, size_t len, void *ctx)
{
    (void)ctx;
    return fwrite(text, 1, len, out) == len ? 0 : -1;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 1000000;
    out = fopen(argc > 2 ? argv[2] : "/dev/null", "w");
    if (!out)
        return 1;
    double start = 1000.5;
    ROOM(pub.starts, 1, pub.starts_cap);
    pub.starts[0] = start;
    pub.runs = 1;
    size_t m0 = add_name("0"), m1 = add_name("0.1");
    const int senders[3] = {3, 1, 2};
    for (long i = 0; i < n; i++) {
        ROOM(pub.steps, pub.nsteps + 1, pub.steps_cap);
        pub.steps[pub.nsteps++] = (step){1, i % 3 ? m1 : m0, i + 1, i % 2 ? "sync" : "obl",
                                         0.000123456789 * (double)(i % 97 + 1), start + 1e-5 * (double)i,
                                         1000 * (i % 7), 64 * (i % 5), add_partners(senders, (int)(i % 4))};
    }
    double best = 1e9;
    for (int r = 0; r < 5; r++) {
        rewind(out);
        double t0 = now();
        if (lines(&start, 1, 1, sink, NULL) || fflush(out))
            return 1;
        double t = now() - t0;
        best = t < best ? t : best;
    }
    printf("%.1f\n", best / (double)n * 1e9);
    return fclose(out) != 0;
}
