"""PUB programs under call (`#pragma cll parallel PUB NAME`), run as a user runs them (`call
run`, real mpicc and mpirun on 1, 2 and 4 ranks, oversubscribed): the trace's superstep
section (docs/trace-format.md, "Supersteps (PUB programs)") of samples/fig1_pub and
samples/fft_pub — runs, every rank's steps per machine, kinds, partners, bytes, END — and
the `run` column of their experiments; misuse (an experiment end inside a partition, no
bsp_begin, a NAME that is not a t_bsp) and the paper's program as printed, typo included."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections import defaultdict
from pathlib import Path
from typing import NamedTuple

import pytest

from llac.supersteps import Step, parse_step
from support.runtime import run_bounded

pytestmark = pytest.mark.skipif(shutil.which("mpicc") is None or shutil.which("mpirun") is None,
                                reason="MPI is not installed (apt-get install libopenmpi-dev openmpi-bin)")

REPO = Path(__file__).resolve().parent.parent
SAMPLES = REPO / "samples"
PROGRAMS = REPO / "tests" / "pub_programs"
COMPLEX = 16            # bytes of one double complex point
MAXN = 2048             # fft_pub's sweep in the tests: N = 1024, 2048
REPS = 3                # its repetitions (REPS in fft_pub.c)
FIG1_REPS, FIG1_H = 5, 8192     # the sample's default message size


def call(*args, cwd, quick_abort=False) -> subprocess.CompletedProcess:
    """`python -m call ARGS` in `cwd` (with `quick_abort`, Open MPI kills the other ranks 1 s
    after one fails, instead of call's 10 s grace)."""
    env = dict(os.environ, PYTHONPATH=str(REPO))
    if quick_abort:
        env["OMPI_MCA_odls_base_sigkill_timeout"] = "1"
    done = run_bounded([sys.executable, "-m", "call", *args], timeout=300, cwd=cwd, env=env)
    assert "Traceback" not in done.stderr
    return done


class Trace(NamedTuple):
    header: dict[str, str]
    records: dict[str, list[dict[str, float]]]   # experiment -> its records, file order
    steps: list[Step]                             # file order


def read(path: Path) -> Trace:
    """The header lines, experiment records (by column name) and @step records of a trace."""
    header, records, steps, columns, experiment = {}, defaultdict(list), [], {}, None
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        if line.startswith("#experiment: "):
            experiment = line.split(": ", 1)[1]
        elif line.startswith("#  columns: "):
            columns[experiment] = line.split(": ", 1)[1].split()
        elif line.startswith("#"):
            key, _, value = line[1:].partition(": ")
            header.setdefault(key, value)
        elif line.startswith("@step "):
            steps.append(parse_step(line.encode(), number, None, tuple(header["supersteps"].split())))  # llac's
        else:
            name, *values = line.split()
            records[name].append(dict(zip(columns[name], map(float, values))))
    return Trace(header, records, steps)


def copy_sample(name: str, directory: Path) -> Path:
    shutil.copy(SAMPLES / name / f"{name}.c", directory)
    return directory


@pytest.fixture(scope="module")
def fig1(tmp_path_factory):
    """samples/fig1_pub run by `call run` (P = 2): its stdout and trace."""
    where = copy_sample("fig1_pub", tmp_path_factory.mktemp("fig1"))
    done = call("run", "fig1_pub.c", cwd=where)
    assert done.returncode == 0, done.stderr
    return done.stdout, read(where / "fig1_pub.cll.2.dat")


@pytest.fixture(scope="module")
def fft(tmp_path_factory):
    """samples/fft_pub run by `call run --procs 1:4:2 -- MAXN`: the directory, stdout, traces."""
    where = copy_sample("fft_pub", tmp_path_factory.mktemp("fft"))
    done = call("run", "fft_pub.c", "--procs", "1:4:2", "--", str(MAXN), cwd=where)
    assert done.returncode == 0, done.stderr
    return where, done.stdout, {P: read(where / f"fft_pub.cll.{P}.dat") for P in (1, 2, 4)}


def shape_of(step: Step) -> tuple:
    """What the program decides of a superstep: (machine, step, sync, in, out, partners as
    written in the trace, messages in, messages out)."""
    partners = ",".join(map(str, step.partners)) or "-"
    return (step.machine, step.step, step.sync, step.inbound, step.outbound, partners, step.messages_in,
            step.messages_out)


def by_rank_and_run(steps: list[Step]) -> dict[tuple[int, int], list[Step]]:
    """A rank's steps of a run, in the order it recorded them (its time order)."""
    grouped = defaultdict(list)
    for s in steps:
        grouped[s.rank, s.run].append(s)
    return grouped


def check_common(trace: Trace, procs: int, runs: int):
    """What every PUB trace holds: the declaration, runs 1..R on every rank, END rising per
    rank, W >= 0, each machine's steps 1..R with one kind per step across its processors, and
    the `end` step of machine 0 last; the f records' run column numbers the runs in order."""
    assert trace.header["parallel"] == "PUB" and trace.header["procs"] == str(procs)
    assert trace.header["supersteps"] == "run rank machine step sync W in out msgs_in msgs_out end partners"
    assert trace.header["superstep_runs"] == "f"
    grouped = by_rank_and_run(trace.steps)
    assert set(grouped) == {(r, k) for r in range(procs) for k in range(1, runs + 1)}
    for (rank, run), steps in grouped.items():
        ends = [s.end for s in steps]
        assert ends == sorted(ends), (rank, run)
        # the run starts at the first processor's exit from its barrier, and a later exit is
        # part of the first W: no superstep ends before the run began or its first W is done
        assert steps[0].end >= -1e-4 and steps[0].end >= steps[0].W - 1e-4, (rank, run, steps[0])
        assert all(s.W >= 0 for s in steps)
        assert steps[-1].machine == "0" and steps[-1].sync == "end"
        for machine in {s.machine for s in steps}:
            numbers = [s.step for s in steps if s.machine == machine]
            assert numbers == list(range(1, len(numbers) + 1)), (rank, run, machine)
    kinds = defaultdict(set)
    for s in trace.steps:
        kinds[s.run, s.machine, s.step].add(s.sync)
    assert all(len(k) == 1 for k in kinds.values())
    for rank in range(procs):
        f = [r for r in trace.records["f"] if r["rank"] == rank]
        assert [r["run"] for r in f] == list(range(1, runs + 1))
        for record in f:   # a run's supersteps span its f record (loose: not a timing test)
            steps = grouped[rank, int(record["run"])]
            assert sum(s.W for s in steps) <= steps[-1].end + 1e-3
            assert abs(steps[-1].end - record["time"]) <= 0.5 * record["time"] + 5e-3


def test_fig1_records_two_oblivious_supersteps_per_run_with_the_exchanged_bytes(fig1):
    stdout, trace = fig1
    assert "fig1_pub: w = 4 ms" in stdout
    check_common(trace, procs=2, runs=FIG1_REPS)
    for (rank, run), steps in by_rank_and_run(trace.steps).items():
        shape = [shape_of(s) for s in steps]
        if rank == 0:   # sends in superstep 1, receives processor 1's message in superstep 2
            assert shape == [("0", 1, "obl", 0, FIG1_H, "-", 0, 1), ("0", 2, "obl", FIG1_H, 0, "1", 1, 0),
                             ("0", 3, "end", 0, 0, "-", 0, 0)]
        else:
            assert shape == [("0", 1, "obl", FIG1_H, 0, "0", 1, 0), ("0", 2, "obl", 0, FIG1_H, "-", 0, 1),
                             ("0", 3, "end", 0, 0, "-", 0, 0)]
    assert {r["w"] for r in trace.records["f"]} == {0.004}
    assert all(r["msgs_sent"] == 1 and r["bytes_recv"] == FIG1_H for r in trace.records["f"])


def fft_steps(P: int, rank: int, N: int) -> list[tuple]:
    """The supersteps fft_pub makes on `rank` of P for N points, in time order: (machine,
    step, sync, in, out, partners, messages in, messages out)."""
    steps = []

    def machine(name: str, low: int, size: int, n: int, last: str):
        if size == 1:
            steps.append((name, 1, last, 0, 0, "-", 0, 0))
            return
        half = size // 2
        upper = rank >= low + half
        steps.append((name, 1, "part", 0, 0, "-", 0, 0))
        machine(f"{name}.{int(upper)}", low + half * upper, half, n // 2, "done")
        exchanged = n // 2 * COMPLEX
        partner = rank - half if upper else rank + half
        steps.append((name, 2, "obl", exchanged, exchanged, str(partner), 1, 1))
        steps.append((name, 3, last, 0, 0, "-", 0, 0))

    machine("0", 0, P, N, "end")
    return steps


@pytest.mark.parametrize("P", [1, 2, 4])
def test_fft_records_each_partition_level_with_its_machines_partners_and_halves(fft, P):
    _, stdout, traces = fft
    trace = traces[P]
    sizes = [1024 * 2 ** k for k in range(MAXN.bit_length() - 10)] * REPS
    check_common(trace, procs=P, runs=len(sizes))
    for (rank, run), steps in by_rank_and_run(trace.steps).items():
        shape = [shape_of(s) for s in steps]
        assert shape == fft_steps(P, rank, sizes[run - 1]), (rank, run)
    for rank in range(P):
        assert [r["N"] for r in trace.records["f"] if r["rank"] == rank] == sizes
    # the inner experiments carry the run of the f they ran in
    assert {r["run"] for r in trace.records.get("D", [])} == (set(range(1, len(sizes) + 1)) if P > 1 else set())


def test_fft_pub_builds_as_plain_c_with_pub_and_prints_the_same_checksum(fft, tmp_path):
    from call.runtime_paths import mpi_include_dir, pub_source
    from call.scripts import launch_environment
    where, stdout, _ = fft
    exe = tmp_path / "fft_pub"
    subprocess.run(["mpicc", "-O2", "-I", str(mpi_include_dir()), str(where / "fft_pub.c"),
                    str(pub_source()), "-o", str(exe), "-lm"], check=True, capture_output=True)
    env = {**os.environ, **launch_environment(2, True)[0]}
    plain = subprocess.run(["mpirun", "-np", "2", str(exe), str(MAXN)], env=env, check=True,
                           capture_output=True, text=True, timeout=120).stdout
    line = re.search(r"fft_pub: N = 2048, checksum .*", plain).group(0)
    assert stdout.count(line) == 3   # the instrumented runs, P = 1, 2, 4


def test_pub_sweep_writes_the_mpi_scripts(fft):
    where, _, _ = fft
    script = (where / "fft_pub.cll.sweep.sh").read_text()
    assert "P = 1 2 4" in script and '$MPIRUN -np "$P" "$EXE" 2048' in script
    assert (where / "fft_pub.cll.sbatch").exists()


@pytest.fixture(scope="module")
def misuse(tmp_path_factory):
    where = tmp_path_factory.mktemp("misuse")
    shutil.copy(PROGRAMS / "pub_misuse.c", where)
    return where


@pytest.mark.parametrize("procs", [1, 2])
def test_an_experiment_end_inside_a_partition_is_a_runtime_error_with_the_trace_kept(misuse, procs):
    done = call("run", "pub_misuse.c", "--procs", f"{procs}:{procs}:2", "--", "open", cwd=misuse,
                quick_abort=True)
    message = ("experiment 'f' ends at pub_misuse.c:19:5 inside a partition of its BSP machine "
               "(machine 0.0): call bsp_done before the experiment's end")
    assert done.returncode != 0
    assert f"cll: error: {message}" in done.stderr
    assert read(misuse / f"pub_misuse.cll.{procs}.dat").header["status"] == f"error: {message}"


def test_a_pub_program_that_never_calls_bsp_begin_is_told_so(misuse):
    """Before bsp_begin a rank has no P: it writes no trace (every rank wrote prog.cll.1.dat,
    over an earlier sweep's P=1 trace)."""
    earlier = misuse / "pub_misuse.cll.1.dat"
    earlier.write_text("an earlier sweep's P=1 trace\n")
    done = call("run", "pub_misuse.c", "--procs", "2:2:2", "--", "nobegin", cwd=misuse,
                quick_abort=True)
    assert done.returncode != 0
    assert ("cll: error: experiment 'f' (pub_misuse.c:16:5) begins before bsp_begin: a "
            "'#pragma cll parallel PUB' program must call bsp_begin first") in done.stderr
    assert "the run failed (status 70) and wrote no trace for P=2" in done.stderr, done.stderr
    assert earlier.read_text() == "an earlier sweep's P=1 trace\n"
    assert [path.name for path in misuse.glob("pub_misuse.cll.1*")] == [earlier.name]
    earlier.unlink()


def test_a_machine_name_that_is_not_a_t_bsp_is_a_compile_error_at_the_name(tmp_path):
    (tmp_path / "prog.c").write_text('#include "pub.h"\n#pragma cll parallel PUB count\n'
                                     "int main(void) {\n    int count = 0;\n"
                                     "    #pragma cll sync f f[0]\n    count++;\n"
                                     "    #pragma cll end f\n    return count;\n}\n")
    done = call("cc", "-c", "prog.c", "-o", "prog.o", cwd=tmp_path)
    assert done.returncode != 0
    assert re.search(r"prog\.c:2:26: error: .*the NAME of '#pragma cll parallel PUB NAME' must "
                     r"be a variable of type t_bsp or t_bsp \*", done.stderr), done.stderr
    assert "#pragma cll parallel PUB count\n      |                          ^" in done.stderr, done.stderr


def test_the_papers_program_builds_as_printed_and_reports_its_typo(tmp_path):
    """Fig. 4/5 as printed: `#pragma ll end D` ends the D open there, with a warning; both
    branches' D are then timed."""
    shutil.copy(PROGRAMS / "fft_paper.c", tmp_path)
    done = call("cc", "-Wall", "-Werror", "-c", "fft_paper.c", "-o", "fft_paper.o", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert ("fft_paper.c:53:20: warning: '#pragma ll end D' is taken as '#pragma cll end D'"
            in done.stderr), done.stderr
    assert call("translate", "fft_paper.c", cwd=tmp_path).returncode == 0
    generated = (tmp_path / "fft_paper.cll.c").read_text()
    assert generated.count("_end(&cll_exp_D, ") == 2, generated


SELF_SENDS = r"""#include "pub.h"
#include <string.h>
#pragma cll parallel PUB gbsp procs = 2:2:2
int main(int argc, char **argv)
{
    t_bsp machine, *gbsp = &machine;
    static char own[100], other[300];
    int N = 1;
    bsp_begin(gbsp, &argc, &argv);
    int pid = bsp_pid(gbsp), P = bsp_nprocs(gbsp);
    #pragma cll sync f f[0]
    bsp_send(gbsp, pid, own, sizeof own);                 /* a local copy */
    bsp_send(gbsp, (pid + 1) % P, other, sizeof other);
    bsp_oblsync(gbsp, 2);
    int got = bsp_nmsgs(gbsp);
    #pragma cll end f
    #pragma cll report all
    bsp_end(gbsp);
    return got != 2 || N != 1;
}
"""


def test_messages_a_processor_sends_itself_are_not_communication(tmp_path):
    """BSP's h counts the bytes that cross between processors: a message to itself is a
    local copy. Both are delivered (the program checks 2 messages), but each processor's
    superstep shows only the 300 bytes exchanged with the other one, and only it as partner."""
    (tmp_path / "selfsend.c").write_text(SELF_SENDS)
    done = call("run", "selfsend.c", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    trace = read(tmp_path / "selfsend.cll.2.dat")
    shapes = {s.rank: shape_of(s) for s in trace.steps if s.sync == "obl"}
    assert shapes == {0: ("0", 1, "obl", 300, 300, "1", 1, 1), 1: ("0", 1, "obl", 300, 300, "0", 1, 1)}
