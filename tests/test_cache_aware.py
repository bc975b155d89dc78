"""Cache-aware prediction (issue 11, item 4) on a synthetic machine whose mountain has clear
steps, and a streaming experiment measured on it: where the fitted working sets cross the
levels (fit, plot), the warning when a prediction leaves them, the machine-aware prediction
beside the plain one, and `predict ... on MACHINE` for a machine whose memory is slower."""
import os
import re
import subprocess
import sys

import numpy as np
import pytest

from cll_grammar.machine import available_memory, this_host
from cll_grammar.machinedb import MachineDB
from support.machines import probe_run, write_stream_trace

IN_CACHE = [int(2 ** (k / 2)) for k in range(18, 43)]       # 512 .. 2 Mi doubles: 4 KiB .. 16 MiB
IN_MEMORY = [2 ** 22, 2 ** 23, 2 ** 24]                        # 32 .. 128 MiB


@pytest.fixture
def workdir(tmp_path):
    with MachineDB(tmp_path / "machines.sqlite") as db:
        db.store(probe_run())
        db.store(probe_run(date="2026-11-23T12:00:00Z", label="slowmem", memory_factor=1.6))
    write_stream_trace(tmp_path / "train.cll.1.dat", IN_CACHE)
    write_stream_trace(tmp_path / "big.cll.1.dat", IN_MEMORY)
    write_stream_trace(tmp_path / "slow.cll.1.dat", IN_MEMORY, memory_factor=1.6)
    write_stream_trace(tmp_path / "nobytes.cll.1.dat", IN_CACHE, working_set=None)
    write_stream_trace(tmp_path / "elsewhere.cll.1.dat", IN_CACHE, host="unprobed")
    chase_in_cache = [n // 8 for n in IN_CACHE]                  # 64 bytes per element: 4 KiB .. 16 MiB
    write_stream_trace(tmp_path / "chase.cll.1.dat", chase_in_cache, working_set="64*N", chase=True)
    write_stream_trace(tmp_path / "thrice.cll.1.dat", IN_CACHE, passes=3)
    write_stream_trace(tmp_path / "thricebig.cll.1.dat", IN_MEMORY, passes=3)
    write_stream_trace(tmp_path / "chasebig.cll.1.dat", [n // 8 for n in IN_MEMORY], working_set="64*N", chase=True)
    write_stream_trace(tmp_path / "rising.cll.1.dat", chase_in_cache, working_set="64*N", chase=True, rise=0.25)
    write_stream_trace(tmp_path / "risingbig.cll.1.dat", [n // 8 for n in IN_MEMORY], working_set="64*N", chase=True,
                       rise=0.25)
    return tmp_path


def llac(workdir, command: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "LLAC_MACHINE_DB": str(workdir / "machines.sqlite")}
    return subprocess.run([sys.executable, "-m", "llac", "-c", command], cwd=workdir, env=env,
                          capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=120)


def column(out: str, title: str) -> list[float]:
    """The values of the table column `title` (a header cell) in the first table that has it."""
    lines = out.splitlines()
    head = next(i for i, line in enumerate(lines) if title in line and "predicted" in line)
    start = lines[head].index(title)
    rows = []
    for line in lines[head + 2:]:
        if not re.match(r"^\s*\d", line):
            break
        rows.append(float(line[start:start + len(title) + 2].split()[0]))
    return rows


def memory_row_errors(out: str) -> list[float]:
    """The error % of the second prediction column (machine-aware, or on another machine) in
    the rows whose working set lies in memory."""
    return [float(line.split()[7]) for line in out.splitlines() if re.match(r"^\s*\d+\s", line) and "memory" in line]


def assert_memory_rows_within_5_percent(workdir, command: str) -> str:
    """Run `command`; its three predictions in memory err by less than 5%; returns its output."""
    done = llac(workdir, command)
    assert done.returncode == 0, done.stderr
    errors = memory_row_errors(done.stdout)
    assert len(errors) == 3 and all(abs(e) < 5 for e in errors), done.stdout
    return done.stdout


def test_fit_says_where_the_working_set_crosses_the_levels(workdir):
    done = llac(workdir, 'load "train.cll.1.dat"; fit stream')
    assert done.returncode == 0, done.stderr
    assert "working set (8*N bytes) 4 KiB .. 16 MiB on node1@1" in done.stdout
    assert "L1 (32 KiB) left at N≈4096" in done.stdout
    # the synthetic stream costs 0.3 ns + 0.9 reads per element: 96% memory in L3 (8 ns a read)
    assert "memory term: each unit of N makes sequential reads, one per 64-byte line" in done.stdout
    share = re.search(r"(\d+)% of the fitted time at the largest", done.stdout)
    assert share and 92 <= int(share.group(1)) <= 99, done.stdout


def test_the_machine_aware_prediction_sees_memory_coming(workdir):
    out = assert_memory_rows_within_5_percent(
        workdir, 'load "train.cll.1.dat"; fit stream; load "big.cll.1.dat" as big; predict stream at big')
    assert all(e < -60 for e in column(out, "error %"))     # the plain fit keeps L3's cost
    assert "lies in memory, beyond L3 where the largest fitted points lie" in out


def test_a_working_set_larger_than_the_probe_measured_is_said(workdir):
    done = llac(workdir, 'load "train.cll.1.dat"; fit stream; predict stream N=16777216, 33554432, 67108864')
    assert done.returncode == 0, done.stderr
    assert ("note: at N=33554432 and 1 more the working set (256 MiB; 512 MiB at the largest) is larger "
            "than any node1@1 measured: the machine-aware prediction uses the cost per access at 128 MiB "
            "there. `call probe --largest 512MiB` measures that far (`predict ... on NAME@ID` uses a quick "
            "or labelled run)") in done.stdout
    done = llac(workdir, 'load "train.cll.1.dat"; fit stream; predict stream N=33554432 on node1@slowmem')
    assert "larger than any node1@2 measured" in done.stdout           # the run that costs it


def test_on_another_machine_the_note_says_what_its_basic_operations_scale(workdir):
    """A review: `on vm@loaded` said "the plain prediction" beside a column scaled by the
    basic operations (x1.022); and nothing said why the factor was 1 when the runs share none."""
    with MachineDB(workdir / "machines.sqlite") as db:
        bare = probe_run(date="2026-11-23T14:00:00Z", label="bare")
        bare.operations = []
        db.store(bare)
    done = llac(workdir, 'load "train.cll.1.dat"; fit stream; predict stream N=33554432 on node1@slowmem; '
                         'predict stream N=33554432 on node1@bare')
    assert done.returncode == 0, done.stderr
    assert re.search(r"the rest scaled by node1@2's basic operations against node1@1's \(x1, the geometric "
                     r"mean over \d+ basic operations?\)", done.stdout), done.stdout
    assert ("scaled by node1@3's basic operations against node1@1's (x1: the two probe runs share no basic "
            "operation to compare)") in done.stdout


def test_a_working_set_beyond_what_a_probe_here_can_measure_gets_no_probe_to_run(workdir):
    """`call probe --largest` refuses more than half the memory available: the note named such a
    probe (a reviewer's `predict small N=1e9` suggested --largest 32GiB, refused here)."""
    host = this_host()
    with MachineDB(workdir / "machines.sqlite") as db:
        db.store(probe_run(host=host))
    write_stream_trace(workdir / "here.cll.1.dat", IN_CACHE, host=host)
    half = available_memory() // 2
    done = llac(workdir, f'load "here.cll.1.dat"; fit stream; predict stream N={half // 4}')
    assert done.returncode == 0, done.stderr
    said = re.search(r"a probe here measures at most ([\d.]+) GiB, half the memory available, so no probe "
                     r"of this machine reaches it", done.stdout)        # the memory available moves a little
    assert said and "--largest" not in done.stdout, done.stdout
    assert abs(float(said[1]) * 2 ** 30 - half) < 0.05 * half


def test_random_accesses_are_costed_by_the_random_chase(workdir):
    out = assert_memory_rows_within_5_percent(
        workdir, 'load "chase.cll.1.dat"; fit stream; load "chasebig.cll.1.dat" as big; predict stream at big')
    assert "memory term: each unit of N makes dependent random accesses (a chase)" in out


def test_a_kernel_that_reads_its_data_three_times_is_predicted_in_memory(workdir):
    # one pass through the working set (the roofline before session 27) costs a third of the
    # memory traffic here: it predicted 63% low; the memory term is fitted to the data
    assert_memory_rows_within_5_percent(
        workdir, 'load "thrice.cll.1.dat"; fit stream; load "thricebig.cll.1.dat" as big; predict stream at big')


def test_a_time_that_does_not_follow_any_cache_level_gets_no_memory_term(workdir, tmp_path):
    flat = tmp_path / "flat.cll.1.dat"
    flat.write_text((workdir / "train.cll.1.dat").read_text())
    rng = np.random.default_rng(3)
    lines = flat.read_text().splitlines()
    body = [f"stream 0 0 {float(line.split()[4]) * 2e-9 * (1 + 0.01 * rng.random())!r} {line.split()[4]}"
            if line.startswith("stream ") else line for line in lines]
    flat.write_text("\n".join(body) + "\n")
    done = llac(workdir, 'load "flat.cll.1.dat"; fit stream; predict stream N=8388608')
    assert done.returncode == 0, done.stderr
    assert "no memory term: the formula alone predicts the fitted points with the largest working sets" in done.stdout
    assert "machine-aware: the plain prediction (no memory term: see `fit`)" in done.stdout
    row = next(line for line in done.stdout.splitlines() if line.strip().startswith("8388608"))
    assert row.split()[1] == row.split()[4], row        # the same value in both columns


def test_predict_on_a_machine_with_slower_memory(workdir):
    out = assert_memory_rows_within_5_percent(
        workdir, 'load "train.cll.1.dat"; fit stream; load "slow.cll.1.dat" as slow; '
                 'predict stream at slow on node1@slowmem')
    assert "on node1@2 [s]" in out and "probe run" not in out      # two full runs: no note


def test_a_what_if_between_a_quick_and_a_full_run_says_they_differ_by_method(workdir):
    """A reviewer's what-if between a full run and a quick one of the same quiet machine
    predicted a 2.3x slower chase: a quick probe's chase read 30-50% higher."""
    with MachineDB(workdir / "machines.sqlite") as db:
        db.store(probe_run(date="2026-11-23T13:00:00Z", label="quickone", quick=True))
    done = llac(workdir, 'load "train.cll.1.dat"; fit stream; predict stream N=8388608 on node1@quickone')
    assert done.returncode == 0, done.stderr
    assert ("note: node1@3 is a quick probe run and node1@1, where the fitted points were measured, a full "
            "one: their figures differ by the probe's method as well as by machine; compare runs of one "
            "kind (`machine list` shows them)") in done.stdout


def test_the_plot_marks_the_levels(workdir):
    done = llac(workdir, 'load "train.cll.1.dat"; plot stream loglog')
    assert "║ the working set leaves L1 at N≈4096" in done.stdout
    assert "║" in done.stdout.split("x measured")[0]


def test_a_model_file_keeps_its_working_set(workdir):
    done = llac(workdir, 'load "train.cll.1.dat"; fit stream; export stream.model "m.json"; '
                         'load "m.json" as m; predict m N=8388608')
    assert done.returncode == 0, done.stderr
    assert "machine-aware [s]" in done.stdout and "memory" in done.stdout


def test_without_what_it_needs_the_plain_prediction_stands_alone(workdir):
    done = llac(workdir, 'load "nobytes.cll.1.dat"; fit stream; predict stream N=8388608')
    assert done.returncode == 0 and "machine-aware" not in done.stdout and "working set" not in done.stdout
    done = llac(workdir, 'load "elsewhere.cll.1.dat"; predict stream N=8388608')
    assert done.returncode == 0, done.stderr
    assert "machine-aware [s]" not in done.stdout
    assert "the machine the data were measured on (unprobed, Test CPU 9000) was never probed" in done.stdout
    write_stream_trace(workdir / "negative.cll.1.dat", IN_CACHE, working_set="-8*N")
    done = llac(workdir, 'load "negative.cll.1.dat"; fit stream')
    assert done.returncode == 0 and "L1" not in done.stdout, done.stdout
    assert "the working set -8*N is no size" in done.stderr          # refused at load, as call refuses it
    write_stream_trace(workdir / "negative.cll.1.dat", IN_CACHE, working_set="8*(N-4096)")
    done = llac(workdir, 'load "negative.cll.1.dat"; fit stream')    # a size somewhere, negative at the data
    assert done.returncode == 0 and "L1" not in done.stdout, done.stdout
    assert "no cache-aware prediction: the working set (8*(N - 4096) bytes) is -" in done.stdout
    assert "it must count bytes (> 0)" in done.stdout


@pytest.mark.parametrize("command, message", [
    ('load "nobytes.cll.1.dat"; predict stream N=8 on node1', "states no working set"),
    ('load "train.cll.1.dat"; predict stream N=8 on nowhere', "no machine 'nowhere'"),
    ('load "train.cll.1.dat"; predict stream N=8 on node1@fast', "machine node1 has no probe run 'fast'"),
])
def test_predict_on_a_machine_it_cannot_use_is_a_clear_error(workdir, command, message):
    done = llac(workdir, command)
    assert done.returncode == 1 and message in done.stderr and "Traceback" not in done.stderr, done.stderr


@pytest.mark.parametrize("trace, name, sizes", [("train", "stream", "1048576, 16777216, 67108864"),
                                                ("chase", "stream", "65536, 2097152, 8388608")])
def test_on_the_data_s_own_probe_run_the_what_if_is_the_machine_aware_prediction(workdir, trace, name, sizes):
    """Review 45: `on` the run the data were measured on gave up to 2.5 times the machine-aware
    column (max(0, t - m) + m where the memory term m exceeded the interval's prediction t)."""
    done = llac(workdir, f'load "{trace}.cll.1.dat"; fit {name}; predict {name} N={sizes}; '
                         f'predict {name} N={sizes} on node1@1')
    assert done.returncode == 0, done.stderr
    aware, on_own_run = column(done.stdout, "machine-aware [s]"), column(done.stdout, "on node1@1 [s]")
    assert len(aware) == 3 and aware == on_own_run, done.stdout


def test_where_a_quadratic_working_set_leaves_a_level_is_its_root_in_fit_and_plot(workdir, tmp_path):
    """Review 45: `bytes 16*N*N` left 32 KiB at N≈45.13 by `fit` (interpolated between sample
    points) and at 45.25 (the root) by `plot`; both say the root now."""
    sizes = [16, 24, 32, 39, 47, 64, 96, 128, 192, 243, 289, 384, 512, 1024]
    write_stream_trace(workdir / "square.cll.1.dat", sizes, working_set="16*N*N")
    done = llac(workdir, f'load "square.cll.1.dat"; fit stream; plot stream to "{tmp_path / "p.txt"}" replace')
    assert done.returncode == 0, done.stderr
    root = (32 * 1024 / 16) ** 0.5                                   # 45.25
    assert f"L1 (32 KiB) left at N≈{root:.4g}" in done.stdout, done.stdout
    assert f"N≈{root:.4g}" in (tmp_path / "p.txt").read_text()


def test_the_machine_aware_prediction_scales_the_constants_whether_the_rise_is_continued_or_not(workdir):
    # The rise `set trend on` continues and the memory term are the same growth of the cost
    # per access, measured and probed: the machine-aware column starts from the constants.
    command = 'load "rising.cll.1.dat"; fit stream; load "risingbig.cll.1.dat" as big; predict stream at big'
    off, on = llac(workdir, command), llac(workdir, "set trend on; " + command)
    assert off.returncode == 0 and on.returncode == 0, off.stderr + on.stderr
    assert "beyond the data: the time per unit of work rises with N" in on.stdout
    plain_off, plain_on = column(off.stdout, "predicted [s]"), column(on.stdout, "predicted [s]")
    assert len(plain_on) == 3 and all(b > 2 * a for a, b in zip(plain_off, plain_on))   # the rise is continued
    assert column(on.stdout, "machine-aware [s]") == column(off.stdout, "machine-aware [s]") != []
