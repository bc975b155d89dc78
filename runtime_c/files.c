/* files.c -- where the trace and the runtime's hidden files go, and how they are created.
 *
 * Hidden files (the trace being written, spill files) are created next to the trace with
 * mkostemp: unpredictable names, O_CREAT|O_EXCL (a planted symbolic link is never followed,
 * the creation fails instead of writing through it), close-on-exec, mode 0600.
 *
 * A finished trace is placed at its path without losing another run's: the file found there
 * may be replaced only if it was there when this run's path was fixed (at start-up, or when
 * cll_set_procs changed P or the rank: re-running is normal) or if this run put it there.
 * A file that appeared since is another run's: this run's trace then goes to a unique name
 * (prog.cll.1.dat -> prog.cll.1.<pid>.dat), with one message on stderr, and stays there. The
 * check and the replacement are one atomic step where the kernel allows it (link() when no
 * file is there, renameat2(RENAME_EXCHANGE) and a look at what was displaced otherwise).
 */
#define _GNU_SOURCE
#include "cll_internal.h"
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char cwd[4096] = ".";
static char trace_env[4096];        /* CLL_TRACE made absolute, or "" */
static char trace_path[8192];       /* returned by cll_trace_path */
static char diverted[8192];         /* this run's own unique trace name, once needed */
static volatile sig_atomic_t own_file;   /* rank 0 writes its own records as .rank0 (cll_own_file_) */
static mode_t file_mode = 0644;     /* 0666 less the umask: what a plain fopen would give */

/* A file's identity: who wrote it, as far as rename/link can tell. */
typedef struct identity {
    int exists;
    dev_t dev;
    ino_t ino;
    struct timespec mtime;
} identity;

static identity baseline;   /* the trace path's file when the path was fixed */
static identity ours;       /* the file this run last placed */

static identity identity_of(const struct stat *st)
{
    return (identity){1, st->st_dev, st->st_ino, st->st_mtim};
}

static int same_file(const identity *a, const struct stat *st)
{
    return a->exists && a->dev == st->st_dev && a->ino == st->st_ino;
}

/* Whether the file `st` at the trace path may be replaced: this run's, or unchanged since
 * the path was fixed. */
static int replaceable(const struct stat *st)
{
    return same_file(&ours, st)
           || (same_file(&baseline, st) && baseline.mtime.tv_sec == st->st_mtim.tv_sec
               && baseline.mtime.tv_nsec == st->st_mtim.tv_nsec);
}

/* The path every process of this run would write: CLL_TRACE or <cwd>/<prog>.cll.<P>.dat,
 * with ".rank<r>" before ".dat" (or at the end) for MPI rank r > 0, and for rank 0 too once
 * its own records must not go to the gathered trace's path (cll_own_file_). */
static void canonical_path(char *out, size_t size)
{
    char base[8192];
    if (trace_env[0])
        snprintf(base, sizeof base, "%s", trace_env);
    else
        snprintf(base, sizeof base, "%s/%s.cll.%d.dat", cwd, cll_program_name_(), cll_procs_());
    size_t len = strlen(base);
    int dat = len > 4 && !strcmp(base + len - 4, ".dat");
    if (cll_rank_() > 0 || own_file)
        snprintf(out, size, "%.*s.rank%d%s", (int)(len - 4 * dat), base, cll_rank_(),
                 dat ? ".dat" : "");
    else
        snprintf(out, size, "%s", base);
}

/* Note the file now at the trace's path (none, or one an earlier run left): it may be
 * replaced. Called at start-up and whenever P or the rank (so the path) change. */
static void trace_baseline(void)
{
    char path[8192];
    struct stat st;
    canonical_path(path, sizeof path);
    baseline = lstat(path, &st) == 0 ? identity_of(&st) : (identity){0};
}

void cll_paths_init_(void)
{
    if (!getcwd(cwd, sizeof cwd))
        strcpy(cwd, ".");
    const char *env = getenv("CLL_TRACE");
    if (env && *env)
        snprintf(trace_env, sizeof trace_env, "%s%s%s", env[0] == '/' ? "" : cwd,
                 env[0] == '/' ? "" : "/", env);
    mode_t mask = umask(022);   /* reading the umask sets it: put it back at once */
    umask(mask);
    file_mode = 0666 & ~mask;
    trace_baseline();
}

/* Whether the folder of the trace can take it (0, else -1 with errno): checked at start-up,
 * so that a run whose trace could not be written stops before it measures anything. */
int cll_trace_folder_check_(void)
{
    const char *path = cll_trace_path();   /* absolute */
    const char *slash = strrchr(path, '/');
    char folder[8192];
    snprintf(folder, sizeof folder, "%.*s", slash && slash > path ? (int)(slash - path) : 1, path);
    return access(folder, W_OK | X_OK);
}

void cll_own_file_(void)
{
    own_file = 1;
    trace_baseline();
}

void cll_set_procs(int procs, int rank)
{
    cll_registry_set_procs_(procs, rank);
    trace_baseline();   /* a new path: the file there now is not another run's */
}

const char *cll_program_name_(void) { return program_invocation_short_name; }

const char *cll_trace_path(void)
{
    if (diverted[0])
        return diverted;
    canonical_path(trace_path, sizeof trace_path);
    return trace_path;
}

int cll_hidden_file_(char *out, size_t size, const char *what)
{
    const char *path = cll_trace_path();
    const char *slash = strrchr(path, '/');
    int dirlen = (int)(slash - path);     /* trace paths are absolute */
    if ((size_t)snprintf(out, size, "%.*s/.%s.%s.XXXXXX", dirlen, path, slash + 1, what) >= size) {
        errno = ENAMETOOLONG;
        return -1;
    }
    return mkostemp(out, O_CLOEXEC);
}

/* Put `tmp` at `path` if no file is there, or if the one there is replaceable: 1 if done,
 * 0 if another run's file is there (nothing changed), -1 on an error (errno set). */
static int put_if_free(const char *tmp, const char *path)
{
    for (int attempt = 0; attempt < 8; attempt++) {
        struct stat st, displaced;
        if (lstat(path, &st) != 0) {
            if (errno != ENOENT)
                return -1;
            if (link(tmp, path) == 0)   /* fails if someone created it meanwhile */
                return unlink(tmp), 1;
            if (errno == EEXIST)
                continue;
            if (errno != EPERM && errno != EOPNOTSUPP)   /* no hard links here */
                return -1;
            return rename(tmp, path) == 0 ? 1 : -1;
        }
        if (!replaceable(&st))
            return 0;
        if (renameat2(AT_FDCWD, tmp, AT_FDCWD, path, RENAME_EXCHANGE) != 0) {
            if (errno != EINVAL && errno != ENOSYS)
                return -1;
            return rename(tmp, path) == 0 ? 1 : -1;   /* no exchange here: check, then replace */
        }
        if (lstat(tmp, &displaced) == 0 && displaced.st_dev == st.st_dev
            && displaced.st_ino == st.st_ino)
            return unlink(tmp), 1;
        /* another run's file arrived between the check and the exchange: give it back */
        if (renameat2(AT_FDCWD, tmp, AT_FDCWD, path, RENAME_EXCHANGE) != 0)
            return -1;
        return 0;
    }
    return 0;
}

/* Move `tmp` to a new name of the form <path less .dat>.<pid>[-k].dat. 0 or -1. */
static int put_unique(const char *tmp, const char *path)
{
    size_t len = strlen(path);
    int dat = len > 4 && !strcmp(path + len - 4, ".dat");
    for (int k = 1; k < 1000; k++) {
        char suffix[32] = "";
        if (k > 1)
            snprintf(suffix, sizeof suffix, "-%d", k);
        snprintf(diverted, sizeof diverted, "%.*s.%ld%s%s", (int)(len - 4 * dat), path,
                 (long)getpid(), suffix, dat ? ".dat" : "");
        if (link(tmp, diverted) == 0)
            return unlink(tmp);
        if ((errno == EPERM || errno == EOPNOTSUPP) && rename(tmp, diverted) == 0)
            return 0;   /* no hard links here: the pid makes the name unique */
        if (errno != EEXIST)
            break;
    }
    diverted[0] = '\0';
    return -1;
}

int cll_place_trace_(const char *tmp, int fd)
{
    struct stat st;
    if (fchmod(fd, file_mode) != 0 || fstat(fd, &st) != 0)
        return -1;
    if (diverted[0]) {   /* this run's own unique name: nobody else writes it */
        if (rename(tmp, diverted) != 0)
            return -1;
        ours = identity_of(&st);
        return 0;
    }
    char path[8192];
    canonical_path(path, sizeof path);
    int done = put_if_free(tmp, path);
    if (done < 0)
        return -1;
    if (!done) {
        if (put_unique(tmp, path) != 0)
            return -1;
        fprintf(stderr, "cll: warning: %s was written by another run while this one ran; "
                "not overwriting it: this run's trace is %s\n", path, diverted);
    }
    ours = identity_of(&st);
    return 0;
}
