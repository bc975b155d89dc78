"""The runtime's files: hidden files with unpredictable names that never follow a planted
symbolic link, a trace that never overwrites another run's, real gcc-built programs."""
import os
import stat
import subprocess
import sys

from support.runtime import begin, build, c_program, end, read_trace, run

# `count` records (enough to spill from 200,000 on), then wait for a file `go` if asked
WAITING = c_program({"s": ("s[0] + s[1]*i", ["i"])}, """
    long count = atol(argv[1]);
    for (long i = 0; i < count; i++) { """ + begin("s", "i") + " " + end("s") + """ }
    if (argc > 2) {
        puts("recorded"); fflush(stdout);
        while (access(argv[2], F_OK) != 0) usleep(1000);
    }
    cll_report(0, 0); return 0;""", prelude="#include <unistd.h>")


def start(exe, *args) -> subprocess.Popen:
    """Start `exe` in its directory with arguments, CLL_* cleared."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CLL_")}
    return subprocess.Popen([str(exe), *map(str, args)], cwd=exe.parent, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def records(path) -> int:
    """The number of records of experiment s in a complete trace."""
    trace = read_trace(path)
    assert trace.ended and trace.header["status"] == "complete"
    return len(trace.records["s"])


def test_planted_links_at_the_old_predictable_names_are_not_followed(tmp_path):
    """The old names were .prog.cll.1.dat.{tmp,spill0}.<pid>: links planted there (by the
    program itself, which knows its pid) are left alone and their target is unchanged."""
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    src = c_program({"s": ("s[0] + s[1]*i", ["i"])}, f"""
        char name[256];
        snprintf(name, sizeof name, ".prog.cll.1.dat.tmp.%ld", (long)getpid());
        symlink("victim.txt", name);
        snprintf(name, sizeof name, ".prog.cll.1.dat.spill0.%ld", (long)getpid());
        symlink("victim.txt", name);
        for (long i = 0; i < 200000; i++) {{ {begin("s", "i")} {end("s")} }}
        system("stat -c '%n %a %F' .prog.cll.1.dat.spill0.* > hidden-files");
        cll_report(0, 0); return 0;""", prelude="#include <unistd.h>")
    result = run(build(tmp_path, {"prog.c": src}))
    assert result.returncode == 0, result.stderr
    assert victim.read_text() == "precious\n"
    assert records(tmp_path / "prog.cll.1.dat") == 200000
    links = sorted(p.name for p in tmp_path.iterdir() if p.is_symlink())
    assert len(links) == 2 and all(p.startswith(".prog.cll.1.dat.") for p in links)
    # the real spill file: a new regular file, readable by its owner only, not at the old name
    hidden = (tmp_path / "hidden-files").read_text().splitlines()
    spill = [line for line in hidden if "symbolic link" not in line]
    assert len(spill) == 1 and spill[0].endswith(" 600 regular file"), hidden
    assert not any(p.name.startswith(".") and not p.is_symlink() for p in tmp_path.iterdir())


def test_the_trace_has_the_usual_permissions(tmp_path):
    build(tmp_path, {"prog.c": WAITING})
    result = subprocess.run("umask 027 && ./prog 10", shell=True, cwd=tmp_path,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert stat.S_IMODE((tmp_path / "prog.cll.1.dat").stat().st_mode) == 0o640


def test_a_rerun_replaces_the_trace_an_earlier_run_left(tmp_path):
    exe = build(tmp_path, {"prog.c": WAITING})
    for count in (30, 20):
        result = run_with_args(exe, count)
        assert result.returncode == 0 and result.stderr == "", result.stderr
    assert records(tmp_path / "prog.cll.1.dat") == 20
    assert sorted(p.name for p in tmp_path.glob("prog.cll.*")) == ["prog.cll.1.dat"]


def run_with_args(exe, *args) -> subprocess.CompletedProcess:
    """Run `exe` with arguments until it ends."""
    process = start(exe, *args)
    out, err = process.communicate(timeout=120)
    return subprocess.CompletedProcess(process.args, process.returncode, out, err)


def test_a_trace_written_by_another_run_meanwhile_is_not_overwritten(tmp_path):
    """The issue's case: runs of 400,000 and 300,000 records in one directory. The longer run
    started first and finishes last: its trace goes to a unique name, with a message, and
    llac's glob loads both."""
    exe = build(tmp_path, {"prog.c": WAITING})
    first = start(exe, 400_000, tmp_path / "go")
    assert first.stdout.readline() == "recorded\n"
    second = run_with_args(exe, 300_000)
    assert second.returncode == 0 and second.stderr == "", second.stderr
    (tmp_path / "go").touch()
    out, err = first.communicate(timeout=120)
    assert first.returncode == 0, err
    unique = tmp_path / f"prog.cll.1.{first.pid}.dat"
    assert err == (f"cll: warning: {tmp_path}/prog.cll.1.dat was written by another run while "
                   f"this one ran; not overwriting it: this run's trace is {unique}\n")
    assert records(tmp_path / "prog.cll.1.dat") == 300_000
    assert records(unique) == 400_000
    listing = subprocess.run([sys.executable, "-m", "llac", "-c", 'load "prog.cll.*.dat"; list'],
                             cwd=tmp_path, capture_output=True, text=True)
    assert listing.returncode == 0, listing.stderr
    assert "700000" in listing.stdout


def test_two_runs_ending_together_both_keep_their_trace(tmp_path):
    """Really concurrent: whichever ends second, no trace is lost."""
    exe = build(tmp_path, {"prog.c": WAITING})
    for round_ in range(3):
        for old in tmp_path.glob("prog.cll.1*.dat"):
            old.unlink()
        go = tmp_path / f"go{round_}"
        runs = [start(exe, n, go) for n in (400_000, 300_000)]
        for process in runs:
            assert process.stdout.readline() == "recorded\n"
        go.touch()
        for process in runs:
            process.communicate(timeout=120)
            assert process.returncode == 0
        counts = sorted(records(p) for p in tmp_path.glob("prog.cll.1*.dat"))
        assert counts == [300_000, 400_000]


def test_a_rank_file_gets_the_same_treatment(tmp_path):
    """An MPI rank's own file (prog.cll.4.rank2.dat, fixed when cll_set_procs gives the rank):
    one that existed before is replaced, one written meanwhile is kept."""
    src = c_program({"s": ("s[0]", [])}, f"""
        cll_set_procs(4, 2);
        {begin("s")} {end("s")}
        if (argc > 1) {{ FILE *f = fopen("prog.cll.4.rank2.dat", "w"); fputs("theirs\\n", f); fclose(f); }}
        cll_report(0, 0); return 0;""")
    exe = build(tmp_path, {"prog.c": src})
    rank_file = tmp_path / "prog.cll.4.rank2.dat"
    rank_file.write_text("an earlier run's\n")
    result = run(exe)
    assert result.returncode == 0 and result.stderr == ""
    assert read_trace(rank_file).header["status"] == "complete"
    process = start(exe, "other")
    _, err = process.communicate(timeout=60)
    assert "was written by another run" in err
    assert rank_file.read_text() == "theirs\n"
    assert read_trace(tmp_path / f"prog.cll.4.rank2.{process.pid}.dat").header["status"] == "complete"


def test_a_link_planted_at_the_trace_path_meanwhile_is_not_followed(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    src = c_program({"s": ("s[0]", [])}, f"""
        {begin("s")} {end("s")}
        symlink("victim.txt", "prog.cll.1.dat");
        cll_report(0, 0); return 0;""", prelude="#include <unistd.h>")
    process = start(build(tmp_path, {"prog.c": src}))
    _, err = process.communicate(timeout=60)
    assert process.returncode == 0 and "another run" in err
    assert victim.read_text() == "precious\n"
    assert (tmp_path / "prog.cll.1.dat").is_symlink()
    assert read_trace(tmp_path / f"prog.cll.1.{process.pid}.dat").header["status"] == "complete"
