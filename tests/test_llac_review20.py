"""The llac-side findings of the new-user review (20): `suggest` says when a variable has too
few values to tell its terms apart, a prediction where the formula has no value is one clear
warning (no Python warning, no cache level beside it), and `describe` of an experiment merged
from several trace files shows what holds for the whole."""
import os
import subprocess
import sys

import numpy as np
import pytest

from cll_grammar.formula import parse_formula
from cll_grammar.machinedb import MachineDB
from llac.experiment import Experiment
from llac.fit import FitSettings
from llac.suggest import suggest, tie_groups
from support.machines import probe_run, write_stream_trace
from support.parallel import write_sweep
from test_whatif_bsp import SIZES, write_fft_like_trace


def llac_in(folder, script: str) -> subprocess.CompletedProcess:
    """Run `llac -c script` in `folder` (its machine database there) with every Python warning
    shown: none may reach the user."""
    env = {**os.environ, "LLAC_MACHINE_DB": str(folder / "machines.sqlite"), "PYTHONWARNINGS": "always"}
    return subprocess.run([sys.executable, "-m", "llac", "-c", script], cwd=folder, env=env,
                          capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=120)


# ---- 1. suggest with a variable of two values
def sweep(procs, seed=7) -> Experiment:
    """f = 1e-5 + 1e-9*N + 2e-5*P over N = 2^10..2^17 and `procs`, 3 repetitions, 1% noise."""
    n, p = np.meshgrid(2.0 ** np.arange(10, 18), np.asarray(procs, dtype=float), indexing="ij")
    n, p = np.repeat(n.ravel(), 3), np.repeat(p.ravel(), 3)
    time = (1e-5 + 1e-9 * n + 2e-5 * p) * np.random.default_rng(seed).lognormal(0, 0.01, len(n))
    return Experiment("f", parse_formula("f[0] + f[1]*N*P", experiment="f"), {"N": n, "P": p, "time": time})


@pytest.mark.parametrize("seed", [7, 8])
def test_suggest_says_two_values_of_p_cannot_tell_its_terms_apart(seed):
    found = suggest(sweep((1, 2), seed), FitSettings())
    assert found.scarce == (("P", (1.0, 2.0)),)
    first, last = found.ranked[0].tied
    tied = found.ranked[:last]
    assert first == 1 and last >= 3 and all(r.tied == (1, last) for r in tied)
    assert max(r.held_out for r in tied) - min(r.held_out for r in tied) < 1e-9
    # powers of P beside N, the simplest first: any function of P is a line through 2 points
    # (P^(1/2) is not among them: through 1 and 2 it needs f[0] < 0, held at its bound 0)
    assert [r.formula for r in tied] == ["f[0] + f[1]*N + f[2]*P", "f[0] + f[1]*N + f[2]*P^2",
                                         "f[0] + f[1]*N + f[2]*P^(3/2)"]
    assert found.ranked[last].tied is None or found.ranked[last].tied[0] > last


def test_suggest_with_constants_free_ties_every_power_of_p():
    found = suggest(sweep((1, 2)), FitSettings(constants="free"))
    assert found.ranked[0].tied == (1, 4) and [r.formula for r in found.ranked[:4]] == [
        f"f[0] + f[1]*N + f[2]*{p}" for p in ("P", "P^2", "P^(1/2)", "P^(3/2)")]


def test_exact_data_tie_the_formulas_that_fit_it_exactly():
    n = np.repeat(2.0 ** np.arange(10, 18), 3)
    exact = Experiment("f", parse_formula("f[0] + f[1]*N", experiment="f"), {"N": n, "time": 1e-6 * n})
    found = suggest(exact, FitSettings())
    assert found.ranked[0].formula == "f[0] + f[1]*N" and found.ranked[0].tied[0] == 1 and found.scarce == ()


def test_suggest_with_three_values_of_p_ranks_without_a_tie():
    found = suggest(sweep((1, 2, 4)), FitSettings())
    assert found.scarce == () and found.ranked[0].tied is None
    assert found.ranked[0].formula == "f[0] + f[1]*N + f[2]*P"


def test_tied_candidates_share_a_tie_and_go_simplest_first():
    ordered = tie_groups([(0.2, "f[0] + f[1]*N^(1/2)"), (0.1, "f[0] + f[1]*N + f[2]*N^2"),
                          (0.1 * (1 + 1e-9), "f[0] + f[1]*N^2"), (0.3, "f[0] + f[1]*N")])
    assert ordered == [(0.1 * (1 + 1e-9), "f[0] + f[1]*N^2", (1, 2)), (0.1, "f[0] + f[1]*N + f[2]*N^2", (1, 2)),
                       (0.2, "f[0] + f[1]*N^(1/2)", None), (0.3, "f[0] + f[1]*N", None)]


def test_llac_suggest_on_a_sweep_of_two_p_names_the_tie(tmp_path):
    write_sweep(tmp_path, procs=(1, 2), sizes=[1024 * 2 ** k for k in range(8)])
    # the sweep's FFT formula predicts best; with a formula of N*P, sums of N and P terms do
    done = llac_in(tmp_path, 'load "prog.cll.*.dat"; g = f formula "g[0] + g[1]*N*P"; suggest g')
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    lines = done.stdout.splitlines()
    assert "P has 2 values (1, 2): formulas that differ only in P's terms are tied (through 2 points any term " \
           "in P fits like another, unless a constant is held at its bound 0); measure more P to tell them apart" in lines
    rows = [line.split() for line in lines if line.strip()[:1].isdigit()]
    last = int(rows[0][-1].split("-")[1])
    assert last > 1 and all(row[-1] == f"1-{last}" for row in rows[:last]), done.stdout
    [apply] = [line for line in lines if line.startswith("apply the ")]
    assert apply.startswith(f"apply the simplest of the tied best (ranks 1-{last}, none better than the "
                            f'others): g_best = g formula "g[0] + g[1]*') and "apply the best" not in done.stdout


# ---- 2. a prediction where the formula has no value
@pytest.fixture
def probed(tmp_path):
    """A probed machine (node1, and node1@fastnet), an FFT-like MPI trace measured on it and a
    streaming trace that states its working set."""
    with MachineDB(tmp_path / "machines.sqlite") as db:
        db.store(probe_run())
        db.store(probe_run(label="fastnet", date="2026-11-23T13:00:00Z"))
    write_fft_like_trace(tmp_path / "y.cll.4.dat")
    write_stream_trace(tmp_path / "s.cll.1.dat", SIZES)
    return tmp_path


@pytest.mark.parametrize("what_if", ["", " with g=4e-9, L=1e-5", " on node1@fastnet"])
def test_no_value_at_p_0_is_one_warning_and_no_python_warning(probed, what_if):
    done = llac_in(probed, f'load "y.cll.4.dat"; set prune off; fit f; predict f N=4096 P=0,2{what_if}')
    assert done.returncode == 0 and "Warning" not in done.stderr and "Traceback" not in done.stderr, done.stderr
    rows = {line.split()[1]: line.split() for line in done.stdout.splitlines() if line.split()[:1] == ["4096"]}
    assert rows["0"][2:5] == ["-"] * 3 and float(rows["2"][2]) > 0
    if what_if:
        assert rows["0"][5] == "-" and float(rows["2"][5]) > 0
    warnings = [line for line in done.stdout.splitlines() if "has no value" in line]
    assert warnings == ["warning: the formula has no value at N=4096 P=0: its terms f[1]*N/P, f[2]*N*(P - 1)/P, "
                        "f[3]*log(P) are not finite numbers there (the log of a number <= 0, a division by zero "
                        "or an overflow); no prediction"], done.stdout
    assert "changes nothing" not in done.stdout and "change nothing" not in done.stdout


def test_no_cache_level_beside_a_prediction_that_has_no_value(probed):
    done = llac_in(probed, 'load "s.cll.1.dat"; s = stream formula "s[0] + s[1]*N*log(N)"; fit s; '
                           'predict s N=0,4096,1e308')
    assert done.returncode == 0 and "Warning" not in done.stderr, done.stderr
    lines = done.stdout.splitlines()
    header = next(line for line in lines if "level" in line and "predicted" in line)
    level = header.index("level")
    rows = {line.split()[0]: line for line in lines[lines.index(header) + 2:] if line[:1] in (" ", "0", "4", "1")
            and line.split()[0] in ("0", "4096", "1e+308")}
    assert rows["0"][level:level + 5].strip() == "" and rows["1e+308"][level:level + 5].strip() == ""
    assert rows["4096"][level:level + 5].strip() == "L1"
    assert rows["1e+308"].split()[1] == "-"             # an overflowing term: no prediction
    assert "no value at N=0, N=1e+308: its term s[1]*N*log(N) is not a finite number" in done.stdout
    assert "inf GiB" not in done.stdout and "warning: at N=1e+308 the working set" not in done.stdout


# ---- 3. describe of an experiment merged from several trace files
def describe_lines(folder, script: str) -> list[str]:
    """The output lines of `llac -c script` (which must succeed)."""
    done = llac_in(folder, script)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    return done.stdout.splitlines()


def test_describe_of_a_sweep_shows_the_files_and_only_the_fields_they_agree_on(tmp_path):
    write_sweep(tmp_path, procs=(1, 2, 4))
    lines = describe_lines(tmp_path, 'load "prog.cll.*.dat"; describe work')
    assert "merged from 3 trace files (table below); the header fields they all agree on:" in lines
    assert "program: prog" in lines and "parallel: MPI" in lines
    assert not [line for line in lines if line.startswith(("procs:", "records:", "ranks:", "clock_offsets:"))], lines
    head = lines.index("work: trace files") + 1
    assert lines[head].split() == ["file", "records", "procs", "clock_offsets", "ranks"]
    rows = [line.split()[:3] for line in lines[head + 2:head + 5]]
    # rank r runs r+1 records per N (5 sizes), rank 3 none at P = 4
    assert rows == [["prog.cll.1.dat", "5", "1"], ["prog.cll.2.dat", "15", "2"], ["prog.cll.4.dat", "30", "4"]]
    assert "50 records at 5 sample points; repetitions per point: 10..10" in lines


def test_describe_of_one_file_keeps_its_header_and_a_merge_lists_every_file(tmp_path):
    write_sweep(tmp_path, procs=(1, 2, 4))
    lines = describe_lines(tmp_path, 'load "prog.cll.1.dat"; describe f')
    assert "procs: 1" in lines and "work: trace files" not in lines
    assert "15 records at 5 sample points; repetitions per point: 3..3" in lines   # the header's records: said once
    lines = describe_lines(tmp_path, 'load "prog.cll.1.dat", "prog.cll.2.dat"; rename f a; '
                                     'load "prog.cll.4.dat"; both = merge a, f; describe both')
    head = lines.index("both: trace files") + 1
    assert [line.split()[:3] for line in lines[head + 2:head + 5]] == [
        ["prog.cll.1.dat", "15", "1"], ["prog.cll.2.dat", "30", "2"], ["prog.cll.4.dat", "60", "4"]]


def test_describe_of_a_subset_of_a_sweep_counts_what_each_file_keeps(tmp_path):
    """Session 30: a subset of an experiment merged from three files listed each file with the
    records it had before the subset; a subset of one file's records is that file's."""
    write_sweep(tmp_path, procs=(1, 2, 4))
    lines = describe_lines(tmp_path, 'load "prog.cll.*.dat"; s = f where P >= 2 and N <= 2048; describe s')
    head = lines.index("s: trace files") + 1
    assert [line.split()[:3] for line in lines[head + 2:head + 4]] == [["prog.cll.2.dat", "12", "2"],
                                                                    ["prog.cll.4.dat", "24", "4"]]
    assert "origin: prog.cll.2.dat, prog.cll.4.dat" in lines
    lines = describe_lines(tmp_path, 'load "prog.cll.*.dat"; s = f where P == 4; describe s')
    assert "s: trace files" not in lines and "procs: 4" in lines and "origin: prog.cll.4.dat" in lines
    lines = describe_lines(tmp_path, 'load "prog.cll.*.dat"; a = aggregate f by min; describe a')
    assert "records = how many of its records were read from the file; a holds 15 records made from those " \
           "105 (an aggregate)" in lines


def test_one_warning_per_set_of_terms_without_a_value(probed):
    done = llac_in(probed, 'load "s.cll.1.dat"; s = stream formula "s[0] + s[1]*N*log(N) + s[2]/N"; fit s; '
                           'predict s N=0,-1,-2,4096')
    assert done.returncode == 0 and "Warning" not in done.stderr, done.stderr
    warnings = [line for line in done.stdout.splitlines() if "has no value" in line]
    assert [w.split(" there ")[0] for w in warnings] == [
        "warning: the formula has no value at N=0: its terms s[1]*N*log(N), s[2]*1/N are not finite numbers",
        "warning: the formula has no value at N=-1, N=-2: its term s[1]*N*log(N) is not a finite number"], done.stdout


@pytest.mark.parametrize("layout", ["", " by P"])
def test_predict_at_points_none_of_which_has_a_value_says_so(probed, layout):
    (probed / "zero.csv").write_text("N,P,time\n0,0,1e-5\n1024,0,2e-5\n")
    done = llac_in(probed, f'load "y.cll.4.dat"; load "zero.csv" as z formula "z[0] + z[1]*N*P"; '
                           f'predict f at z{layout}')
    assert done.returncode == 0 and "Warning" not in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert "|error|: none, no point has a prediction" in done.stdout and "nan%" not in done.stdout
