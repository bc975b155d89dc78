"""The PUB-compatible BSP library (runtime_c/pub, docs/pub.md) with real mpicc and mpirun on
1, 2 and 4 ranks: delivery and counts after bsp_sync, bsp_hpsend, oblivious exchanges
while a third processor is elsewhere and while a sender races supersteps ahead, nested and
uneven partitions, the paper's Fig. 5 recursion and Figure 1 pattern; and every misuse
stopped by one message naming the function and the rank, with a non-zero exit, never a
hang. The test program is tests/pub_programs/pub_cases.c, compiled against the installed
copy of the library (call.runtime_paths), as a user compiles it."""
from __future__ import annotations

import os
import re
import shutil
import subprocess

import pytest

from call.runtime_paths import mpi_include_dir, pub_source
from call.scripts import launch_environment
from support.runtime import build_pub_program, run_bounded

pytestmark = pytest.mark.skipif(shutil.which("mpicc") is None or shutil.which("mpirun") is None,
                                reason="MPI is not installed (apt-get install libopenmpi-dev openmpi-bin)")

HERE = os.path.dirname(os.path.abspath(__file__))


@pytest.fixture(scope="module")
def program(tmp_path_factory):
    """pub_cases built with mpicc from the installed pub.c and pub.h."""
    return build_pub_program(tmp_path_factory.mktemp("pub"), "pub_cases")


def run(program, procs: int, mode: str, timeout_env: str = "3") -> subprocess.CompletedProcess:
    """mpirun -np procs pub_cases mode (root and oversubscription as `call run` handles them,
    but without its 10 s grace before killing the other ranks, which would let them report
    their own timeouts), with PUB_TIMEOUT=timeout_env and a hard limit so that a hang fails."""
    extra = {key: value for key, value in launch_environment(procs, True)[0].items()
             if key != "OMPI_MCA_odls_base_sigkill_timeout"}
    env = {**os.environ, **extra, "PUB_TIMEOUT": timeout_env}
    return run_bounded(["mpirun", "-np", str(procs), str(program), mode], timeout=90, env=env)


def ok_lines(done: subprocess.CompletedProcess, mode: str) -> list[str]:
    """The run's "ok MODE ..." lines, sorted, after checking it succeeded without a BAD line."""
    assert done.returncode == 0, done.stdout + done.stderr
    assert "BAD" not in done.stdout, done.stdout
    return sorted(line for line in done.stdout.splitlines() if line.startswith(f"ok {mode} "))


@pytest.mark.parametrize("procs", [1, 2, 4])
def test_sync_delivers_every_message_of_the_superstep_in_order(program, procs):
    lines = ok_lines(run(program, procs, "sync"), "sync")
    total = procs * (procs + 1) // 2
    assert lines == sorted(f"ok sync {pid} step {step} messages {total}"
                           for pid in range(procs) for step in (0, 1))


@pytest.mark.parametrize("procs", [2, 4])
def test_oblivious_exchanges_need_no_third_processor_and_keep_supersteps_apart(program, procs):
    assert ok_lines(run(program, procs, "obl"), "obl") == [f"ok obl {pid}" for pid in range(procs)]


@pytest.mark.parametrize("procs", [1, 2, 4])
def test_nested_partitions_number_sync_and_return_to_the_parent(program, procs):
    lines = ok_lines(run(program, procs, "nested"), "nested")
    expected = []
    for pid in range(procs):
        size, low = procs, 0
        while True:
            expected.append(f"ok nested {pid} depth-size {size} pid {pid - low}")
            if size == 1:
                break
            half = size // 2
            low, size = (low, half) if pid - low < half else (low + half, size - half)
    assert lines == sorted(expected)


def test_uneven_partition_numbers_each_subgroup_from_zero(program):
    done = run(program, 4, "nested")
    assert ok_lines(done, "uneven") == [f"ok uneven {pid}" for pid in range(4)]


@pytest.mark.parametrize("procs", [1, 2, 4])
def test_the_papers_recursive_hpsend_oblsync_pattern(program, procs):
    total = procs * (procs + 1) // 2
    assert ok_lines(run(program, procs, "recursive"), "recursive") == [
        f"ok recursive {pid} sum {total}" for pid in range(procs)]


def test_figure_1_runs_and_ends(program):
    lines = ok_lines(run(program, 2, "fig1"), "fig1")
    assert [line.split()[2] for line in lines] == ["0", "1"]


def test_a_partition_waits_for_no_processor_outside_its_subgroup(program):
    """The paper's partition has no barrier: processors 0 and 1 leave their subgroup's
    superstep while 2 and 3 are still a second away from bsp_partition (it met the whole
    machine first in session 21, which made 0 and 1 wait for them)."""
    lines = ok_lines(run(program, 4, "partition_nowait", timeout_env="30"), "partition_nowait")
    seconds = {int(line.split()[2]): float(line.split()[3]) for line in lines}
    assert sorted(seconds) == [0, 1, 2, 3], lines
    assert seconds[0] < 0.5 and seconds[1] < 0.5, seconds
    assert seconds[2] >= 1.0 and seconds[3] >= 1.0, seconds


MISUSE = [
    ("partition_missing", 2, "bsp_partition", [0], "waiting for the other processors of its "
                                                   "subgroup (processors 0..1) to reach bsp_partition"),
    ("partition_outside_missing", 2, "bsp_partition", [0], "waiting for the other processors of the "
                                                           "machine to reach bsp_partition"),
    ("bad_dest", 2, "bsp_send", [1], "destination 2 is outside the machine (processors 0..1)"),
    ("done_root", 2, "bsp_done", [0, 1], "bsp_done without a partition"),
    ("done_twice", 2, "bsp_done", [0, 1], "already ended"),
    ("partition_order", 2, "bsp_partition", [0, 1], "Y[0] = 0: the bounds must increase strictly"),
    ("partition_last", 2, "bsp_partition", [0, 1], "the last bound must be the machine's size 2"),
    ("partition_r", 1, "bsp_partition", [0], "r = 0: the number of subgroups must be at least 1"),
    ("obl_never", 2, "bsp_oblsync", [0], "waited 3 s for message 1 of 1 in superstep 1 and none arrived: "
                                         "the synchronisation cannot be satisfied"),
    ("obl_extra", 2, "bsp_sync", [1], "2 messages were sent to this processor but its bsp_oblsync "
                                      "calls received 1"),
    ("unsent", 2, "bsp_end", [0, 1], "are never delivered"),
    ("steps", 2, "bsp_sync", [0, 1], "reached bsp_sync in superstep "),
    ("sync_missing", 2, "bsp_sync", [0], "waiting for the other processors of the machine to "
                                         "reach bsp_sync (PUB_TIMEOUT=3)"),
    ("getmsg", 1, "bsp_getmsg", [0], "message 0 does not exist"),
    ("after_end", 2, "bsp_sync", [0, 1], "this BSP machine was already ended"),
    ("partitioned_sync", 2, "bsp_sync", [0, 1], "the machine is partitioned"),
    ("end_open", 4, "bsp_end", [0, 1, 2, 3], "a partition of this machine is still open"),
    ("done_unsynced", 2, "bsp_done", [0, 1], "this processor sent 1 message in the partition after "
                                             "its last synchronisation: bsp_done does not synchronise"),
    ("done_hpsend", 2, "bsp_done", [0], "sent 1 message in the partition after its last "
                                        "synchronisation: bsp_done does not synchronise, so it would "
                                        "never be delivered (and the buffer of a bsp_hpsend would "
                                        "still be in use)"),
    ("done_unreceived", 2, "bsp_done", [1], "1 messages were sent to this processor in the partition "
                                            "but 0 were received"),
]


@pytest.mark.parametrize("mode, procs, function, ranks, words", MISUSE)
def test_misuse_is_one_message_with_rank_and_function_then_abort(program, mode, procs, function,
                                                                 ranks, words):
    done = run(program, procs, mode)
    assert done.returncode != 0
    said = [line for line in done.stderr.splitlines() if line.startswith("pub: ")]
    assert said, done.stderr
    for line in said:
        assert line.startswith(f"pub: {function}: rank ") and words in line, line
    seen = {int(re.match(r"pub: \w+: rank (\d+)", line).group(1)) for line in said}
    assert seen and seen <= set(ranks), said
    assert all(said.count(line) == 1 for line in said)


@pytest.mark.parametrize("procs", [2, 4])
def test_processors_in_different_supersteps_name_the_first_that_differs_and_its_superstep(program, procs):
    """steps: processor 0 ends a superstep with bsp_oblsync(0), then every processor calls
    bsp_sync, so 0 is in superstep 2 and the others in superstep 1 (counted from 1 at bsp_begin,
    docs/pub.md, "Supersteps in messages"). Each names the first processor in another superstep
    than its own, as the messages of processors at different calls do; they said "this one in
    superstep 0, mean 0.25" before, a mean no processor was in."""
    done = run(program, procs, "steps")
    assert done.returncode != 0
    said = [line for line in done.stderr.splitlines() if line.startswith("pub: ")]
    assert said and "mean" not in done.stderr, done.stderr
    more = f" ({procs - 1} processors differ from this one)" if procs > 2 else ""
    for line in said:
        rank = int(re.match(r"pub: bsp_sync: rank (\d+) ", line).group(1))
        words = ("processor 1 (rank 1) reached bsp_sync in superstep 1 while this one is in superstep 2" + more
                 if rank == 0 else "processor 0 (rank 0) reached bsp_sync in superstep 2 while this one is in "
                 "superstep 1")
        assert f"): {words}: every processor of a machine has finished the same number" in line, line


def odd_one(mode: str, procs: int) -> int:
    """The processor that differs from the others in a disagreement case of pub_cases."""
    return procs - 1 if mode == "sync_end" else 0


def where(mode: str, procs: int, rank: int) -> tuple[str, str]:
    """In a disagreement case of pub_cases: rank's call and the first processor it finds at
    another call or with other arguments, as the message names it ("processor Q (rank Q) ...")."""
    odd = odd_one(mode, procs)
    calls = {"end_sync": ("bsp_end", "bsp_sync"), "sync_end": ("bsp_end", "bsp_sync"),
             "partition_sync": ("bsp_partition", "bsp_sync"), "done_sync": ("bsp_done", "bsp_sync"),
             "partition_args": ("bsp_partition", "bsp_partition")}[mode]
    mine, other = (calls[0], calls[1]) if rank == odd else (calls[1], calls[0])
    first = odd if rank != odd else (1 if odd == 0 else 0)
    if mode == "partition_args":
        one, two = f"r = 1, Y = {{{procs}}}", f"r = 2, Y = {{1,{procs}}}"
        there, here = (two, one) if rank == 0 else (one, two)
        return mine, (f"processor {first} (rank {first}) passed other arguments to bsp_partition "
                      f"({there} there; {here} here)")
    return mine, f"processor {first} (rank {first}) reached {other} while this one is in {mine}"


@pytest.mark.parametrize("procs", [2, 4])
@pytest.mark.parametrize("mode", ["end_sync", "sync_end", "partition_sync", "partition_args", "done_sync"])
def test_processors_at_different_calls_are_told_where_the_others_are(program, mode, procs):
    """bsp_sync, bsp_end, bsp_partition and bsp_done meet with one exchange whose key names the
    call and the partition's arguments: each processor that says something names the call it
    is in and a processor elsewhere (Open MPI's "MPI Error in NBC subrequest" or a mean of
    garbage supersteps before; a hang in MPI_Comm_create_group for a partition). PUB_TIMEOUT
    10 s, not 3, so that a slow machine is not taken for a hang (a passing run never waits for
    it); the timeouts once seen here were a deadlock, see the test below."""
    done = run(program, procs, mode, timeout_env="10")
    assert done.returncode != 0
    said = [line for line in done.stderr.splitlines() if line.startswith("pub: ")]
    assert said and "NBC" not in done.stderr and "mean" not in done.stderr, done.stderr
    for line in said:
        rank = int(re.match(r"pub: \w+: rank (\d+)", line).group(1))
        call, words = where(mode, procs, rank)
        assert line.startswith(f"pub: {call}: rank {rank} ") and words in line, (line, words)
        assert (f"({procs - 1} processors differ from this one)" in line) == (
            procs > 2 and rank == odd_one(mode, procs)), line


def test_a_subgroup_that_agrees_is_not_left_in_comm_create_group_by_a_disagreement(program):
    """partition_args at P = 4: processors 1..3 agree on their subgroup, processor 0 differs.
    Processor 3 could learn of the disagreement before its handshake with 1 and 2 finished
    while they were already in MPI_Comm_create_group, waiting for it: the gathering of the
    keys then waited for them and every processor timed out (4 runs in 20 beside two busy
    loops; CI once). A race, so repeated: each run must name processor 0's arguments."""
    for _ in range(6):
        done = run(program, 4, "partition_args", timeout_env="10")
        said = [line for line in done.stderr.splitlines() if line.startswith("pub: ")]
        assert said and all("passed other arguments" in line for line in said), done.stderr


@pytest.mark.parametrize("value", ["soon", "-1", "inf", "1e400", "1e-400"])
def test_a_bad_timeout_variable_is_refused_at_bsp_begin(program, value):
    """Infinite and out-of-range values too: they waited forever without a word."""
    done = run(program, 1, "sync", timeout_env=value)
    assert done.returncode != 0
    assert (f"pub: bsp_begin: rank 0: PUB_TIMEOUT='{value}' is not a finite number of seconds >= 0 "
            "(0 waits forever)") in done.stderr


def test_the_installed_library_is_the_source_tree_s():
    """setup.py copies pub.c and pub.h as package data: a stale copy would test old code."""
    root = os.path.dirname(HERE)
    for installed, source in ((pub_source(), "pub.c"), (mpi_include_dir() / "pub.h", "pub.h")):
        with open(os.path.join(root, "runtime_c", "pub", source)) as text:
            assert installed.read_text() == text.read(), f"{installed} is stale: pip install -e ."


def test_the_docs_example_builds_by_hand_and_runs(tmp_path):
    """docs/pub.md's minimal program, compiled with the documented mpicc command."""
    doc = open(os.path.join(os.path.dirname(HERE), "docs", "pub.md")).read()
    source = re.search(r"```c\n(.*?)```", doc, re.S).group(1)
    (tmp_path / "prog.c").write_text(source)
    subprocess.run(["mpicc", "-O2", "-I", str(mpi_include_dir()), "prog.c", str(pub_source()),
                    "-o", "prog", "-lm"], cwd=tmp_path, check=True, capture_output=True)
    env = {**os.environ, **launch_environment(4, True)[0], "PUB_TIMEOUT": "30"}
    done = subprocess.run(["mpirun", "-np", "4", "./prog"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=90)
    assert done.returncode == 0, done.stderr


def test_the_docs_describe_every_function_of_the_header():
    """Every function pub.h declares has its row in docs/pub.md's table."""
    root = os.path.dirname(HERE)
    header = open(os.path.join(root, "runtime_c", "pub", "pub.h")).read()
    doc = open(os.path.join(root, "docs", "pub.md")).read()
    functions = set(re.findall(r"^\S[^(;]*?\b(bsp\w+)\(", header, re.M))
    assert len(functions) == 15
    missing = [name for name in functions if not re.search(rf"^\| `[^`]*\b{name}\(", doc, re.M)]
    assert not missing, f"docs/pub.md's table of functions lacks {missing}"


@pytest.mark.skipif(shutil.which("mpicc.mpich") is None or shutil.which("mpirun.mpich") is None,
                    reason="MPICH is not installed (apt-get install mpich)")
def test_mpich_builds_it_without_warnings_and_runs_it(tmp_path):
    """The user's mpicc compiles the library: MPICH's too, warning-free."""
    exe = build_pub_program(tmp_path, "pub_cases", mpicc="mpicc.mpich")
    for mode in ("sync", "recursive"):
        done = run_bounded(["mpirun.mpich", "-np", "2", str(exe), mode], timeout=90,
                           env={**os.environ, "PUB_TIMEOUT": "30"})
        assert done.returncode == 0 and "BAD" not in done.stdout, done.stdout + done.stderr


@pytest.mark.parametrize("sample, args, printed", [
    ("fig1_pub", [], r"mean time \d+\.\d+ w over 1 runs"),
    ("fft_pub", ["1024"], r"fft_pub: N = 1024, checksum "),
])
def test_the_pub_samples_build_and_run_as_plain_c(tmp_path, sample, args, printed):
    """Their READMEs say so: mpicc SAMPLE.c pub.c, pragmas ignored (fig1_pub divided by its
    sampling loop's counter, which plain C never advances: 'inf w over 0 runs')."""
    source = os.path.join(HERE, os.pardir, "samples", sample, f"{sample}.c")
    subprocess.run(["mpicc", "-O2", "-I", str(mpi_include_dir()), source, str(pub_source()),
                    "-o", str(tmp_path / sample), "-lm"], check=True, capture_output=True, text=True)
    extra = launch_environment(2, True)[0]
    done = run_bounded(["mpirun", "-np", "2", str(tmp_path / sample), *args], timeout=90,
                       env={**os.environ, **extra})
    assert done.returncode == 0 and re.search(printed, done.stdout), done.stdout + done.stderr
    assert "inf" not in done.stdout and "nan" not in done.stdout
