/* The sequential machine probe that `call probe` builds and runs (docs/machine.md).

   Usage: memory_probe MAX_BYTES REPS TARGET_SECONDS STEPS_PER_DOUBLING STRIDES LINE
     MAX_BYTES           the largest working set of the memory mountain (the grid's last point)
     REPS                repetitions of every figure
     TARGET_SECONDS      the shortest timed interval of one repetition
     STEPS_PER_DOUBLING  working sets 4 KiB * 2^(k / STEPS_PER_DOUBLING) (2: x sqrt 2)
     STRIDES             comma-separated strides in bytes (multiples of 8), e.g. 8,64,256
     LINE                the cache line size in bytes (a multiple of 8): the chase's node

   Output on stdout, one figure a line, seconds per access or per operation, with the
   minimum over the repetitions and the spread (median - min) / min:
     probe 1
     mountain read|write WORKING_SET STRIDE SECONDS SPREAD
     mountain chase WORKING_SET LINE SECONDS SPREAD
     mountain gather WORKING_SET LINE SECONDS SPREAD
     op NAME SECONDS SPREAD
     end
   Progress on stderr, one line per sweep over all figures (a calibration, then one per
   repetition): `progress I N WHAT`.

   The memory mountain reads (sums) or writes every STRIDE-th byte of a working set of
   WORKING_SET bytes, pass after pass; a compiler barrier after every pass keeps the passes
   from being merged or removed, and the sums go to a volatile sink. The chase follows a
   pointer from line to line of the working set in a random cyclic order (Sattolo's
   shuffle, built once per working set): each load's address is the previous load's value,
   so neither prefetching nor overlap hides its latency. The gather reads one double per
   line of the working set in the same random order, but takes each address from the order
   itself (read in sequence), so the loads do not depend on each other and the memory
   system overlaps them, as a hash table's probes or a sparse matrix's gather. The operations are
   chains of 8 dependent (x = x op y) or 8 independent (x_i = x_i op y) double operations,
   y read from a volatile so that nothing is folded at compile time. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MIN_WORKING_SET 4096
#define CALIBRATION_ACCESSES 4096 /* the chase's calibration walk */
#define CHASE_CAP (1L << 22)      /* the most accesses of one timed chase */
#define BARRIER() __asm__ __volatile__("" ::: "memory")

static volatile double sink;
static volatile double operand = 1.0000000001;
static volatile double addend = 1e-9;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int compare(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* One figure over `reps` repetitions: its minimum and spread (median - min) / min. */
static void summarize(double *values, int reps, double *min, double *spread)
{
    qsort(values, (size_t)reps, sizeof *values, compare);
    double median = reps % 2 ? values[reps / 2] : 0.5 * (values[reps / 2 - 1] + values[reps / 2]);
    *min = values[0];
    *spread = values[0] > 0 ? (median - values[0]) / values[0] : 0.0;
}

/* Seconds per access of `passes` passes reading every `step`-th of `n` doubles. */
static double read_passes(double *data, size_t n, size_t step, long passes)
{
    double start = now();
    for (long p = 0; p < passes; p++) {
        double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
        size_t i = 0;
        for (; i + 3 * step < n; i += 4 * step) {
            s0 += data[i];
            s1 += data[i + step];
            s2 += data[i + 2 * step];
            s3 += data[i + 3 * step];
        }
        for (; i < n; i += step)
            s0 += data[i];
        sink = s0 + s1 + s2 + s3;
        BARRIER();
    }
    return (now() - start) / ((double)passes * (double)((n + step - 1) / step));
}

/* Seconds per access of `passes` passes writing every `step`-th of `n` doubles. */
static double write_passes(double *data, size_t n, size_t step, long passes)
{
    double start = now();
    for (long p = 0; p < passes; p++) {
        double value = (double)p;
        for (size_t i = 0; i < n; i += step)
            data[i] = value;
        BARRIER();
    }
    return (now() - start) / ((double)passes * (double)((n + step - 1) / step));
}

typedef double (*pass_fn)(double *, size_t, size_t, long);

/* The random chase of one working set: `lines` nodes of `line` bytes at the start of the
   data, node i followed by node next[i] (one cycle through all of them). */
struct chase {
    size_t lines;
    uint32_t *next;
    size_t at;      /* the node the last walk stopped at: the next walk goes on from there */
    size_t gathered; /* where in the order the last gather stopped */
};

static uint64_t random_state = 0x9E3779B97F4A7C15u;

/* xorshift64: the probe's orders are random but the same from run to run. */
static uint64_t next_random(void)
{
    random_state ^= random_state << 13;
    random_state ^= random_state >> 7;
    random_state ^= random_state << 17;
    return random_state;
}

/* A random cyclic permutation of `lines` nodes (Sattolo's algorithm): i -> next[i] visits
   every node once before it returns. */
static uint32_t *random_cycle(size_t lines)
{
    uint32_t *next = malloc(lines * sizeof *next);
    if (!next)
        return NULL;
    for (size_t i = 0; i < lines; i++)
        next[i] = (uint32_t)i;
    for (size_t i = lines - 1; i > 0; i--) {
        size_t j = (size_t)(next_random() % i);
        uint32_t swap = next[i];
        next[i] = next[j];
        next[j] = swap;
    }
    return next;
}

/* Write the chase's pointers into the data (untimed): this also brings the working set
   into its cache, as the warm pass of a read does. */
static void link_chase(char *data, size_t line, const struct chase *c)
{
    for (size_t i = 0; i < c->lines; i++)
        *(void **)(data + i * line) = data + (size_t)c->next[i] * line;
}

/* Put back the doubles the pointers replaced, so the read passes sum ordinary numbers
   (a pointer read as a double is subnormal, slow on some CPUs). */
static void unlink_chase(double *data, size_t line, const struct chase *c)
{
    size_t step = line / sizeof *data;
    for (size_t i = 0; i < c->lines; i++)
        data[i * step] = (double)((i * step) & 7);
}

/* Seconds per access of `accesses` dependent loads along the chase, going on from c->at. */
static double chase_walk(char *data, size_t line, struct chase *c, long accesses)
{
    void **p = (void **)(data + c->at * line);
    double start = now();
    for (long i = 0; i < accesses; i++)
        p = (void **)*p;
    double seconds = now() - start;
    c->at = (size_t)((char *)p - data) / line;
    return seconds / (double)accesses;
}

/* Seconds per access of `accesses` independent loads, one double per line of the data in
   the chase's random order (the order read in sequence), going on from c->gathered. */
static double gather_walk(const double *data, size_t line, struct chase *c, long accesses)
{
    size_t step = line / sizeof *data, at = c->gathered;
    double sum[4] = {0, 0, 0, 0};
    double start = now();
    for (long i = 0; i < accesses; i++) {
        sum[i & 3] += data[(size_t)c->next[at] * step];
        at = at + 1 == c->lines ? 0 : at + 1;
    }
    double seconds = now() - start;
    sink = sum[0] + sum[1] + sum[2] + sum[3];
    c->gathered = at;
    return seconds / (double)accesses;
}

/* Accesses of one timed chase or gather: enough to last `target` seconds at `per_access`. */
static long random_accesses(double per_access, double target)
{
    double wanted = per_access > 0 ? ceil(target / per_access) : CHASE_CAP;
    return wanted < 1 ? 1 : wanted > CHASE_CAP ? CHASE_CAP : (long)wanted;
}

/* Passes needed for one repetition to last `target` seconds, from one warm pass. */
static long calibrate(pass_fn run, double *data, size_t n, size_t step, double target)
{
    run(data, n, step, 1);
    double per_pass = run(data, n, step, 1) * (double)((n + step - 1) / step);
    if (per_pass <= 0)
        return 1000000;
    double passes = ceil(target / per_pass);
    return passes < 1 ? 1 : (long)passes;
}

/* The operations: 8 per loop iteration, dependent or independent, `n` iterations. */
#define CHAIN8(op) x = op; x = op; x = op; x = op; x = op; x = op; x = op; x = op;
#define SPREAD8(op)                                                                      \
    a0 = op(a0); a1 = op(a1); a2 = op(a2); a3 = op(a3);                                   \
    a4 = op(a4); a5 = op(a5); a6 = op(a6); a7 = op(a7);

#if defined(__FMA__) || defined(__ARM_FEATURE_FMA)
#define FMA(a, b, c) __builtin_fma(a, b, c)
#else
#define FMA(a, b, c) fma(a, b, c)
#endif

#define ADD(v) ((v) + y)
#define MUL(v) ((v) * y)
#define FMA1(v) FMA(v, y, z)
#define DIV(v) ((v) / y)

#define DEPENDENT(name, op)                                                              \
    static double name(long n)                                                           \
    {                                                                                    \
        double x = 1.0, y = operand, z = addend;                                         \
        (void)z;                                                                         \
        double start = now();                                                            \
        for (long i = 0; i < n; i++) {                                                   \
            CHAIN8(op(x))                                                                \
        }                                                                                \
        double seconds = now() - start;                                                  \
        sink = x;                                                                        \
        return seconds / (8.0 * (double)n);                                              \
    }
#define INDEPENDENT(name, op)                                                            \
    static double name(long n)                                                           \
    {                                                                                    \
        double y = operand, z = addend;                                                  \
        (void)z;                                                                         \
        double a0 = 1, a1 = 2, a2 = 3, a3 = 4, a4 = 5, a5 = 6, a6 = 7, a7 = 8;            \
        double start = now();                                                            \
        for (long i = 0; i < n; i++) {                                                   \
            SPREAD8(op)                                                                  \
        }                                                                                \
        double seconds = now() - start;                                                  \
        sink = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7;                                    \
        return seconds / (8.0 * (double)n);                                              \
    }

DEPENDENT(add_dependent, ADD)
INDEPENDENT(add_independent, ADD)
DEPENDENT(multiply_dependent, MUL)
INDEPENDENT(multiply_independent, MUL)
DEPENDENT(fma_dependent, FMA1)
INDEPENDENT(fma_independent, FMA1)
DEPENDENT(divide_dependent, DIV)
INDEPENDENT(divide_independent, DIV)

/* The clock read's own cost: `n` reads of CLOCK_MONOTONIC. */
static double timer_cost(long n)
{
    struct timespec t;
    double total = 0;
    double start = now();
    for (long i = 0; i < n; i++) {
        clock_gettime(CLOCK_MONOTONIC, &t);
        total += (double)t.tv_nsec;
    }
    double seconds = now() - start;
    sink = total;
    return seconds / (double)n;
}

static const struct {
    const char *name;
    double (*run)(long);
    int per_iteration;  /* operations timed per iteration of run's loop */
} operations[] = {
    {"add_dependent", add_dependent, 8},           {"add_independent", add_independent, 8},
    {"multiply_dependent", multiply_dependent, 8}, {"multiply_independent", multiply_independent, 8},
    {"fma_dependent", fma_dependent, 8},           {"fma_independent", fma_independent, 8},
    {"divide_dependent", divide_dependent, 8},     {"divide_independent", divide_independent, 8},
    {"timer", timer_cost, 1},
};
#define N_OPERATIONS (sizeof operations / sizeof operations[0])

static int parse_strides(const char *text, size_t *strides, int most)
{
    int count = 0;
    char *copy = strdup(text), *save = NULL;
    for (char *part = strtok_r(copy, ",", &save); part; part = strtok_r(NULL, ",", &save)) {
        long stride = strtol(part, NULL, 10);
        if (count == most || stride < 8 || stride % 8) {
            free(copy);
            return -1;
        }
        strides[count++] = (size_t)stride;
    }
    free(copy);
    return count;
}

int main(int argc, char **argv)
{
    if (argc != 7) {
        fprintf(stderr, "usage: memory_probe MAX_BYTES REPS TARGET_SECONDS STEPS_PER_DOUBLING STRIDES LINE\n");
        return 2;
    }
    size_t max_bytes = strtoull(argv[1], NULL, 10);
    int reps = atoi(argv[2]);
    double target = atof(argv[3]);
    int steps = atoi(argv[4]);
    size_t strides[16];
    int n_strides = parse_strides(argv[5], strides, 16);
    long line = atol(argv[6]);
    if (max_bytes < MIN_WORKING_SET || reps < 1 || reps > 1000 || !(target > 0) || steps < 1 ||
        n_strides < 1 || line < 8 || line % 8 || line > MIN_WORKING_SET) {
        fprintf(stderr, "memory_probe: bad arguments\n");
        return 2;
    }

    size_t sizes[256];
    int n_sizes = 0;
    /* the grid up to MAX_BYTES exactly: its last point is MAX_BYTES (rounded down to 512) */
    size_t top = max_bytes / 512 * 512;
    for (int k = 0; n_sizes < 256; k++) {
        size_t size = (size_t)(MIN_WORKING_SET * pow(2.0, (double)k / steps) / 512.0 + 0.5) * 512;
        if (size >= top) {
            if (n_sizes == 0 || top > sizes[n_sizes - 1])
                sizes[n_sizes++] = top;
            break;
        }
        sizes[n_sizes++] = size;
    }
    size_t largest = sizes[n_sizes - 1];
    int n_points = 2 * n_strides * n_sizes, n_chases = n_sizes, n_gathers = n_sizes;
    int n_random = n_chases + n_gathers;
    int n_figures = n_points + n_random + (int)N_OPERATIONS;
    double *data = malloc(largest);
    double *values = malloc((size_t)reps * (size_t)n_figures * sizeof *values);
    long *counts = malloc((size_t)n_figures * sizeof *counts);
    struct chase *chases = calloc((size_t)n_sizes, sizeof *chases);
    int allocated = data && values && counts && chases;
    for (int s = 0; allocated && s < n_sizes; s++) {
        chases[s].lines = sizes[s] / (size_t)line;
        chases[s].next = random_cycle(chases[s].lines);
        allocated = chases[s].next != NULL;
    }
    if (!allocated) {
        fprintf(stderr, "memory_probe: cannot allocate %zu bytes\n", largest);
        return 3;
    }
    for (size_t i = 0; i < largest / sizeof *data; i++)
        data[i] = (double)(i & 7);

    /* figure f < n_points: access f / (n_strides * n_sizes), stride, working set */
    static const char *accesses[] = {"read", "write"};
    pass_fn runs[] = {read_passes, write_passes};
#define ACCESS(f) ((f) / (n_strides * n_sizes))
#define STRIDE(f) strides[(f) / n_sizes % n_strides]
#define SIZE(f) sizes[(f) % n_sizes]
    /* Repetitions are the outer loop, so that a burst of load on a shared machine spoils
       one repetition of many figures rather than every repetition of a few. */
    for (int r = -1; r < reps; r++) {
        if (r < 0)
            fprintf(stderr, "progress 1 %d calibrating\n", reps + 1);
        else
            fprintf(stderr, "progress %d %d repetition %d of %d\n", r + 2, reps + 1, r + 1, reps);
        for (int f = 0; f < n_points; f++) {
            size_t n = SIZE(f) / sizeof *data, step = STRIDE(f) / sizeof *data;
            pass_fn run = runs[ACCESS(f)];
            if (r < 0)
                counts[f] = calibrate(run, data, n, step, target);
            else {
                run(data, n, step, 1); /* warm: the working set in its cache */
                values[(size_t)f * (size_t)reps + (size_t)r] = run(data, n, step, counts[f]);
            }
        }
        for (int s = 0; s < n_chases; s++) {
            int f = n_points + s;
            link_chase((char *)data, (size_t)line, &chases[s]);
            if (r < 0)
                counts[f] = random_accesses(
                    chase_walk((char *)data, (size_t)line, &chases[s], CALIBRATION_ACCESSES), target);
            else
                values[(size_t)f * (size_t)reps + (size_t)r] =
                    chase_walk((char *)data, (size_t)line, &chases[s], counts[f]);
            unlink_chase(data, (size_t)line, &chases[s]);   /* doubles again, and in the cache */
            int g = n_points + n_chases + s;
            if (r < 0)
                counts[g] = random_accesses(
                    gather_walk(data, (size_t)line, &chases[s], CALIBRATION_ACCESSES), target);
            else
                values[(size_t)g * (size_t)reps + (size_t)r] =
                    gather_walk(data, (size_t)line, &chases[s], counts[g]);
        }
        for (int o = 0; o < (int)N_OPERATIONS; o++) {
            int f = n_points + n_random + o;
            double per_op = operations[o].run(1000);
            if (r < 0)
                counts[f] = per_op > 0 ? (long)ceil(target / (operations[o].per_iteration * per_op))
                                       : 1000000;
            else
                values[(size_t)f * (size_t)reps + (size_t)r] = operations[o].run(counts[f]);
        }
    }

    printf("probe 1\n");
    for (int f = 0; f < n_figures; f++) {
        double min, spread;
        summarize(values + (size_t)f * (size_t)reps, reps, &min, &spread);
        if (f < n_points)
            printf("mountain %s %zu %zu %.6e %.4f\n", accesses[ACCESS(f)], SIZE(f), STRIDE(f), min,
                   spread);
        else if (f < n_points + n_chases)
            printf("mountain chase %zu %ld %.6e %.4f\n", sizes[f - n_points], line, min, spread);
        else if (f < n_points + n_random)
            printf("mountain gather %zu %ld %.6e %.4f\n", sizes[f - n_points - n_chases], line, min, spread);
        else
            printf("op %s %.6e %.4f\n", operations[f - n_points - n_random].name, min, spread);
    }
    printf("end\n");
    for (int s = 0; s < n_sizes; s++)
        free(chases[s].next);
    free(chases);
    free(counts);
    free(values);
    free(data);
    return 0;
}
