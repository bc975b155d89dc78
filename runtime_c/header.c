/* header.c -- the header lines a trace and a spill file share (docs/trace-format.md): the
 * run (program, command line, host, timer) and each experiment's declaration, and the whole
 * header of a spill file. Below the store, which writes spill files, and the trace writer.
 */
#define _GNU_SOURCE
#include "cll_internal.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char command[4096];
static char cpu[256] = "unknown";

/* The CPU model as /proc/cpuinfo names it: with the host, it names the machine database's
 * entry for this run (docs/machine.md). Read at start-up: the header may be written from a
 * signal handler, where opening files is not safe. */
void cll_cpu_init_(void)
{
    char line[512];
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return;
    while (fgets(line, sizeof line, f)) {
        char *colon = strchr(line, ':');
        if (strncmp(line, "model name", 10) == 0 && colon) {
            colon++;
            colon += strspn(colon, " \t");
            colon[strcspn(colon, "\r\n")] = '\0';
            if (*colon)
                snprintf(cpu, sizeof cpu, "%s", colon);
            break;
        }
    }
    fclose(f);
}

void cll_command_init_(void)
{
    tzset();   /* the C library reads its time zone file now, not when #date is written,
                  which may be on the way out of a signal (no fopen, no malloc there) */
    FILE *f = fopen("/proc/self/cmdline", "r");
    if (f) {
        size_t n = fread(command, 1, sizeof command - 1, f);
        fclose(f);
        while (n > 0 && command[n - 1] == '\0')
            n--;
        for (size_t i = 0; i < n; i++)
            if (command[i] == '\0' || command[i] == '\n' || command[i] == '\r')
                command[i] = ' ';
        command[n] = '\0';
    }
}

void cll_header_run_lines_(FILE *f, const char *magic, const char *resolution_format)
{
    char date[32] = "", host[256] = "", resolution[64];
    time_t now = time(NULL);
    struct tm tm;
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&now, &tm));
    gethostname(host, sizeof host - 1);
    snprintf(resolution, sizeof resolution, resolution_format, cll_seconds_per_tick());
    fprintf(f, "%s %d\n#program: %s\n#source: %s\n#command: %s\n#date: %s\n#host: %s\n",
            magic, CLL_TRACE_FORMAT_VERSION, cll_program_name_(), cll_sources_(), command, date, host);
    fprintf(f, "#cpu: %s\n#parallel: %s\n#procs: %d\n#timer: %s\n#timer_resolution: %s\n",
            cpu, cll_parallel_(), cll_procs_(), cll_timer_name(), resolution);
    for (int i = 0; i < cll_counters_n_; i++)
        fprintf(f, "%s%s=%s%s", i ? ", " : "#counters: ", cll_counter_column_(i),
                cll_counter_event_(i), i + 1 < cll_counters_n_ ? "" : "\n");
}

void cll_header_experiment_(FILE *f, const cll_experiment *e)
{
    fprintf(f, "#experiment: %s\n#  formula: %s\n", e->name, e->formula);
    if (e->bytes)
        fprintf(f, "#  bytes: %s\n", e->bytes);
    fprintf(f, "#  source: %s\n#  columns: rank thread time", e->source ? e->source : "?");
    for (int i = 0; i < e->nvars; i++)
        fprintf(f, " %s", e->vars[i]);
    for (int i = 0; i < cll_counters_n_; i++)
        fprintf(f, " %s", cll_counter_column_(i));
    fputc('\n', f);
}

int cll_spill_header_(int fd, int thread)
{
    char *text = NULL;
    size_t size = 0;
    FILE *m = open_memstream(&text, &size);
    if (!m)
        return -1;
    cll_header_run_lines_(m, "#cll-spill", "%.17g");
    fprintf(m, "#pid: %ld\n#rank: %d\n#thread: %d\n#byte_order: %s\n",
            (long)getpid(), cll_rank_(), thread,
            __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? "little" : "big");
    for (int id = 0; id < cll_experiment_count_(); id++)
        cll_header_experiment_(m, cll_experiment_at_(id));
    fputs("#data\n", m);
    int rc = fclose(m) == 0 ? 0 : -1;
    for (size_t done = 0; rc == 0 && done < size;) {
        ssize_t w = write(fd, text + done, size - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            rc = -1;
        else
            done += (size_t)w;
    }
    free(text);
    return rc ? -1 : (int)size;
}
