"""Signals: every catchable signal whose default action ends the process saves the records
(spilled ones included) and leaves no hidden file behind; a program's own handlers keep
working. Real gcc-built programs, signalled from outside as a user (or a batch system) would."""
import os
import resource
import signal
import subprocess

import pytest

from support.runtime import begin, build, c_program, default_signals, end, read_trace, run

# 200,000 records of 24 bytes: the 2 MiB buffer spills twice before the signal comes
RECORDS = 200_000
SPILLING = c_program({"s": ("s[0] + s[1]*i", ["i"])}, f"""
    for (long i = 0; i < {RECORDS}; i++) {{ {begin("s", "i")} {end("s")} }}
    printf("spilled %llu\\n", (unsigned long long)cll_spilled_count());
    fflush(stdout);
    for (;;) pause();""", prelude="#include <unistd.h>")

# signal(7): default action Term or Core, and catchable
TERMINATING = ["SIGHUP", "SIGINT", "SIGQUIT", "SIGILL", "SIGTRAP", "SIGABRT", "SIGBUS", "SIGFPE",
               "SIGUSR1", "SIGSEGV", "SIGUSR2", "SIGPIPE", "SIGALRM", "SIGTERM", "SIGSTKFLT",
               "SIGXCPU", "SIGXFSZ", "SIGVTALRM", "SIGPROF", "SIGIO", "SIGPWR", "SIGSYS"]
REALTIME = {"SIGRTMIN+0": signal.SIGRTMIN, "SIGRTMIN+5": signal.SIGRTMIN + 5,
            f"SIGRTMIN+{signal.SIGRTMAX - signal.SIGRTMIN}": signal.SIGRTMAX}


def no_core_dumps():
    """In the child: no core file for the signals whose default action is Core, and the
    default action for the signals a background job starts with ignored (SIGINT, SIGQUIT),
    which the runtime rightly leaves ignored."""
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    default_signals()


def killed_by(exe, number: int) -> subprocess.CompletedProcess:
    """Run `exe` until it says it has spilled, send it signal `number`, wait for its end."""
    process = subprocess.Popen([str(exe)], cwd=exe.parent, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, preexec_fn=no_core_dumps)
    ready = process.stdout.readline()
    assert ready.startswith("spilled ") and int(ready.split()[1]) > 0, ready
    process.send_signal(number)
    out, err = process.communicate(timeout=60)
    return subprocess.CompletedProcess(process.args, process.returncode, ready + out, err)


def test_every_terminating_signal_saves_every_record_and_leaves_no_hidden_file(tmp_path):
    exe = build(tmp_path, {"prog.c": SPILLING})
    signals = {name: getattr(signal, name) for name in TERMINATING} | REALTIME
    for name, number in signals.items():
        result = killed_by(exe, number)
        assert result.returncode == -number, (name, result.stderr)   # the default action still
        text = (tmp_path / "prog.cll.1.dat").read_bytes()
        assert f"\n#status: signal {name}\n".encode() in text and text.endswith(b"\n#end\n"), name
        assert f"\n#  records: {RECORDS}\n".encode() in text, name
        assert text.count(b"\ns 0 0 ") == RECORDS, name       # every record line is there
        if name == "SIGTERM":      # and in order, with its variable, parsed in full once
            trace = read_trace(tmp_path / "prog.cll.1.dat")
            assert [int(r[3]) for r in trace.records["s"]] == list(range(RECORDS))
        assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".")], name
        (tmp_path / "prog.cll.1.dat").unlink()


def test_a_signal_the_program_ignores_stays_ignored(tmp_path):
    src = c_program({"f": ("f[0]", [])}, f"""
        signal(SIGHUP, SIG_IGN);
        {begin("f")} {end("f")}
        cll_install_signal_handlers();   /* as after MPI_Init: must not take SIGHUP back */
        raise(SIGHUP);
        puts("still running"); cll_report(0, 0); return 0;""", prelude="#include <signal.h>")
    result = run(build(tmp_path, {"prog.c": src}))
    assert result.returncode == 0 and result.stdout == "still running\n", result.stderr
    assert read_trace(tmp_path / "prog.cll.1.dat").header["status"] == "complete"


HANDLER = """
static volatile sig_atomic_t got;
static void on_usr(int sig) { got = sig; }
"""


def test_a_handler_the_program_installs_keeps_working(tmp_path):
    """Installed in main (after the runtime's) or before the runtime's handlers are installed
    again (as after MPI_Init): the program's handler runs, the program goes on and reports."""
    src = c_program({"f": ("f[0] + f[1]*n", ["n"])}, f"""
        signal(SIGUSR1, on_usr);
        {begin("f", "1")} {end("f")}
        raise(SIGUSR1);
        printf("got %d\\n", got == SIGUSR1);
        got = 0;
        signal(SIGUSR2, on_usr);
        cll_install_signal_handlers();   /* chains to on_usr */
        raise(SIGUSR2);
        printf("got %d\\n", got == SIGUSR2);
        {begin("f", "2")} {end("f")}
        cll_report(0, 0); return 0;""", prelude="#include <signal.h>", functions=HANDLER)
    result = run(build(tmp_path, {"prog.c": src}))
    assert result.returncode == 0, result.stderr
    assert result.stdout == "got 1\ngot 1\n"
    trace = read_trace(tmp_path / "prog.cll.1.dat")
    assert trace.header["status"] == "complete" and len(trace.records["f"]) == 2


def test_a_fault_is_saved_even_when_a_handler_was_there_before(tmp_path):
    """SIGSEGV with a handler installed before the runtime's (an MPI library's, say): the
    records are saved, then that handler runs (here: it exits with status 3)."""
    src = c_program({"f": ("f[0]", [])}, f"""
        signal(SIGSEGV, on_segv);
        cll_install_signal_handlers();
        {begin("f")} {end("f")}
        raise(SIGSEGV); return 0;""", prelude="#include <signal.h>\n#include <unistd.h>",
                    functions='static void on_segv(int sig) { (void)sig; write(1, "handled\\n", 8); _exit(3); }')
    result = run(build(tmp_path, {"prog.c": src}))
    assert result.returncode == 3 and result.stdout == "handled\n", result.stderr
    trace = read_trace(tmp_path / "prog.cll.1.dat")
    assert trace.header["status"] == "signal SIGSEGV" and len(trace.records["f"]) == 1


WATCHER = r"""
/* Send `sig` to this process as soon as the runtime's temporary trace file exists. */
static int sig;
static void *watch(void *arg)
{
    (void)arg;
    for (;;) {
        DIR *d = opendir(".");
        struct dirent *e;
        while (d && (e = readdir(d)))
            if (!strncmp(e->d_name, ".prog.cll.1.dat.tmp.", 20)) {
                kill(getpid(), sig);
                closedir(d);
                return NULL;
            }
        if (d)
            closedir(d);
    }
}
"""


@pytest.mark.parametrize("name", ["SIGINT", "SIGHUP"])
def test_a_signal_during_the_final_write_waits_for_it(tmp_path, name):
    """A signal that arrives while the trace is written at exit: the write finishes (every
    record, `#end`), then the signal ends the process; no hidden file is left."""
    src = c_program({"s": ("s[0] + s[1]*i", ["i"])}, f"""
        for (long i = 0; i < 500000; i++) {{ {begin("s", "i")} {end("s")} }}
        sig = {name};
        pthread_t t;
        pthread_create(&t, 0, watch, 0);
        return 0;""", prelude="#include <signal.h>\n#include <unistd.h>\n#include <dirent.h>\n"
                    "#include <string.h>\n#include <pthread.h>", functions=WATCHER)
    result = run(build(tmp_path, {"prog.c": src}))
    assert result.returncode == -getattr(signal, name), result.stderr
    trace = read_trace(tmp_path / "prog.cll.1.dat")
    assert trace.header["status"] == "exit-without-report" and trace.ended
    assert len(trace.records["s"]) == 500000
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".")]



# A program with a thread, so that glibc's malloc takes its lock, which then finds its heap
# corrupted and aborts inside free() with that lock held.
CORRUPT_HEAP = """
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
char *volatile keep[4];
static void *idle(void *x) { return x; }
int main(int argc, char **argv) {
    pthread_t t; pthread_create(&t, NULL, idle, NULL); pthread_join(t, NULL);
    int N;
    #pragma cll for(N = 1000; N <= 4000; N += 1000)
    #pragma cll work work[0] + work[1]*N
    { keep[0] = malloc(N); memset(keep[0], 1, N); free(keep[0]); }
    #pragma cll end work
    #pragma cll end for
    keep[1] = malloc(5000); keep[2] = malloc(5000);
    free(keep[1]); free(keep[1]);
    #pragma cll report all
    return 0;
}
"""


def call_run(directory, source: str, env: dict[str, str] | None = None):
    """`call run` on `source` (as heap.c) in `directory`, as a user would; no core files."""
    (directory / "heap.c").write_text(source)
    return subprocess.run(["call", "run", "heap.c"], cwd=directory, capture_output=True,
                          text=True, timeout=60, preexec_fn=no_core_dumps,
                          env={**os.environ, **(env or {})})


def test_a_program_that_dies_inside_malloc_keeps_its_records(tmp_path):
    """glibc aborts inside free() with malloc's lock held: the trace is written without
    allocating (it used to wait for that lock forever)."""
    result = call_run(tmp_path, CORRUPT_HEAP)
    assert result.returncode == 128 + signal.SIGABRT, result.stderr
    assert "double free or corruption" in result.stderr
    trace = read_trace(tmp_path / "heap.cll.1.dat")
    assert trace.header["status"] == "signal SIGABRT" and trace.ended
    assert [int(r[3]) for r in trace.records["work"]] == [1000, 2000, 3000, 4000]
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".") and
                p.name != ".cll-build"]


# Killed inside localtime_r (a bad struct tm pointer) with the C library's time zone lock held,
# which writing the trace's #date takes too: the stall guard must end the wait.
TIME_ZONE_LOCK = """
#include <time.h>
int main(int argc, char **argv) {
    int N;
    #pragma cll for(N = 1; N <= 3; N++)
    #pragma cll work work[0] + work[1]*N
    { }
    #pragma cll end work
    #pragma cll end for
    struct tm tm;
    time_t now = time(NULL);
    localtime_r(&now, argc > 5 ? &tm : (struct tm *)(long)argc);
    #pragma cll report all
    return 0;
}
"""


def test_a_trace_write_that_cannot_progress_after_a_signal_ends_with_a_reason(tmp_path):
    result = call_run(tmp_path, TIME_ZONE_LOCK)
    assert result.returncode == 128 + signal.SIGSEGV, result.stderr
    assert ("cll: error: the records could not be saved after SIGSEGV: the program stopped "
            "inside the C library while it held a lock") in result.stderr
    assert not (tmp_path / "heap.cll.1.dat").exists()
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".") and
                p.name != ".cll-build"]
