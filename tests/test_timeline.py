"""The superstep timeline of a PUB run (issue 12, item 4: "per-processor superstep timeline
(computation, communication, waiting)"): the rows built from a run's supersteps, measured and
as OBSP* sees them (the CALL paper's Figure 1, its barrier version, a partition), their
drawing, and the `timeline` command as a user drives it, mistakes included."""
import contextlib
import os
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from cll_grammar.machinedb import MachineDB
from llac.errors import LlacError
from llac.obsp import evaluate
from llac.render import render
from llac.session import Session
from llac.timeline import draw, timeline_rows
from llac.trace import read_trace
from support.machines import probe_run
from support.supersteps import (FIGURE1, G, H, L, PARTITION, W, figure1_sweep, random_run, write_pub_trace,
                                 write_sweep_trace)
from support.traces import write_matinit

# Figure 1 with global barriers, measured as BSP says: P0 waits w in superstep 1, P1 in superstep 2
BARRIER = [(0, "0", 1, "sync", W, 0, H, 3 * W, "-"), (1, "0", 1, "sync", 2 * W, H, 0, 3 * W, "0"),
           (0, "0", 2, "sync", 2 * W, H, 0, 6 * W, "1"), (1, "0", 2, "sync", W, 0, H, 6 * W, "-")]


def run_of(tmp_path, rows, procs=2, g=G, L=L):
    """A trace of these superstep rows, read back: its run 1's steps and their evaluation."""
    write_pub_trace(tmp_path / "t.cll.dat", rows, procs=procs)
    trace = read_trace(tmp_path / "t.cll.dat")
    assert not trace.problems, trace.problems
    return trace.supersteps.runs()[1], evaluate(trace.supersteps, 1, g, L)


def measured_rows(steps, result):
    """The measured timeline: every superstep ends at its END."""
    return timeline_rows(steps, {(s.machine, s.step, s.rank): s.end for s in steps}, result.comm)


def spans(row, kind):
    """A row's segments of one kind, flat: start, stop, start, stop, ..."""
    return [t for s in row.segments if s.kind == kind for t in (s.start, s.stop)]


def pairs(expected):
    """(start, stop) pairs as `spans` gives them, compared up to rounding."""
    return pytest.approx([t for pair in expected for t in pair])


def time_in(row, kind):
    return sum(s.stop - s.start for s in row.segments if s.kind == kind)


def test_figure1_measured_nobody_waits_each_computes_then_communicates(tmp_path):
    """Oblivious synchronisation: each processor waits only for its partners, and in Figure 1
    each partner is ready before the processor itself, so the picture has no waiting."""
    p0, p1 = measured_rows(*run_of(tmp_path, FIGURE1))
    assert spans(p0, "compute") == pairs([(0, W), (2 * W, 4 * W)])
    assert spans(p0, "comm") == pairs([(W, 2 * W), (4 * W, 5 * W)])
    assert spans(p1, "compute") == pairs([(0, 2 * W), (3 * W, 4 * W)])
    assert spans(p1, "comm") == pairs([(2 * W, 3 * W), (4 * W, 5 * W)])
    assert time_in(p0, "wait") == time_in(p1, "wait") == 0
    assert p0.boundaries == pytest.approx((2 * W, 5 * W)) and p1.boundaries == pytest.approx((3 * W, 5 * W))


def test_with_barriers_p0_waits_w_in_superstep_1_and_p1_in_superstep_2(tmp_path):
    p0, p1 = measured_rows(*run_of(tmp_path, BARRIER))
    assert spans(p0, "wait") == pairs([(W, 2 * W)])
    assert spans(p1, "wait") == pairs([(4 * W, 5 * W)])
    assert spans(p0, "comm") == pairs([(2 * W, 3 * W), (5 * W, 6 * W)])


def test_the_model_view_ends_at_5w_where_the_run_took_longer(tmp_path):
    """A disturbed run (P1's last superstep ended at 7w): the measured view shows P1 waiting
    2w more than the model, the model's view ends at OBSP*'s 5w."""
    late = [*FIGURE1[:3], (1, "0", 2, "obl", W, 0, H, 7 * W, "-")]
    steps, result = run_of(tmp_path, late)
    model = timeline_rows(steps, result.phi, result.comm)
    assert max(s.stop for r in model for s in r.segments) == pytest.approx(5 * W)
    assert time_in(model[1], "wait") == 0
    measured = measured_rows(steps, result)
    assert max(s.stop for s in measured[1].segments) == pytest.approx(7 * W)
    assert time_in(measured[1], "wait") == pytest.approx(2 * W)


def test_the_model_view_of_barriers_waits_like_bsp(tmp_path):
    steps, result = run_of(tmp_path, BARRIER)
    p0, p1 = timeline_rows(steps, result.phi, result.comm)
    assert spans(p0, "wait") == pairs([(W, 2 * W)]) and spans(p1, "wait") == pairs([(4 * W, 5 * W)])


def test_a_partition_enters_and_leaves_subgroups_and_waits_for_the_partner(tmp_path):
    """The docs' worked partition (times in ms): P1 enters 0.0 at 3, computes 1, then waits for
    P0 (ready at 6) and communicates 0.4; after bsp_done the parent's superstep starts at the
    call, so P0 computes 1 (done) + 1 from 6.4 to 8.4 and then waits and communicates to 9.5."""
    steps, result = run_of(tmp_path, PARTITION, procs=4, g=1e-6, L=1e-4)
    rows = measured_rows(steps, result)
    assert [r.groups for r in rows] == [(("0.0", pytest.approx(4e-3), pytest.approx(7.4e-3)),),
                                        (("0.0", pytest.approx(3e-3), pytest.approx(6.4e-3)),),
                                        (("0.1", pytest.approx(2e-3), pytest.approx(3.6e-3)),),
                                        (("0.1", pytest.approx(1e-3), pytest.approx(5.6e-3)),)]
    assert spans(rows[1], "wait")[:2] == pairs([(4e-3, 6e-3)])
    assert spans(rows[1], "comm")[:2] == pairs([(6e-3, 6.4e-3)])
    assert spans(rows[0], "compute")[-4:] == pairs([(6.4e-3, 7.4e-3), (7.4e-3, 8.4e-3)])
    assert spans(rows[0], "comm")[-2:] == pairs([(9.5e-3 - 1.1e-3, 9.5e-3)])
    assert rows[0].boundaries == pytest.approx((6.4e-3, 9.5e-3))     # part and done end in no |
    model = timeline_rows(steps, result.phi, result.comm)
    for simulated, measured in zip(model, rows):                     # the ENDs follow formula (2)
        assert [s.kind for s in simulated.segments] == [s.kind for s in measured.segments]
        assert spans(simulated, "wait") + spans(simulated, "comm") == \
            pytest.approx(spans(measured, "wait") + spans(measured, "comm"))


def test_after_bsp_done_the_parent_starts_at_the_call_not_at_its_return(tmp_path):
    """The trace format's rule: bsp_done's own cost (freeing communicators) is the next
    superstep's computation, so a done that returned late does not move that superstep."""
    late = [(*r[:7], 7.9e-3, r[8]) if r[:3] == (0, "0.0", 2) else r for r in PARTITION]
    steps, result = run_of(tmp_path, late, procs=4, g=1e-6, L=1e-4)
    rank0 = measured_rows(steps, result)[0]
    assert spans(rank0, "compute")[-4:] == pairs([(6.4e-3, 7.4e-3), (7.4e-3, 8.4e-3)])


@pytest.mark.parametrize("seed", range(8))
def test_random_runs_with_nested_partitions_tile_each_processor_time(tmp_path, seed):
    """Seeded runs whose ENDs follow formula (2): every processor's segments follow each other
    without gap or overlap from 0 to its last END, and the model's view is the measured one."""
    procs = 2 + seed % 5
    rows = random_run(seed, procs, 2e-9, 5e-6)
    steps, result = run_of(tmp_path, rows, procs=procs, g=2e-9, L=5e-6)
    measured, model = measured_rows(steps, result), timeline_rows(steps, result.phi, result.comm)
    for row, simulated in zip(measured, model):
        times = [t for s in row.segments for t in (s.start, s.stop)]
        assert times[0] == 0 and times[1:-1:2] == pytest.approx(times[2::2], abs=1e-15)
        assert times[-1] == pytest.approx(result.ends[row.rank])
        for kind in ("compute", "wait", "comm"):
            assert time_in(simulated, kind) == pytest.approx(time_in(row, kind), abs=1e-12)
        assert all(s.kind == "compute" for s in row.segments[:1])


def picture(drawing):
    """A drawing's processor rows by label, without the label."""
    return {label.strip(): "".join(g for g, _ in cells) for label, cells in drawing.lines if label.strip()}


def test_the_drawing_scales_rows_to_their_end_and_marks_subgroups_once(tmp_path):
    steps, result = run_of(tmp_path, PARTITION, procs=4, g=1e-6, L=1e-4)
    drawing = draw(measured_rows(steps, result), "t", 80)
    text = drawing.text()
    lines = text.splitlines()
    assert all(len(line) <= 80 for line in lines)
    rows = picture(drawing)
    columns = 80 - len("P3 ")
    for rank, end in enumerate((9.5, 7.5, 4.7, 7.7)):
        assert abs(len(rows[f"P{rank}"].rstrip()) - columns * end / 9.5) <= 1, (rank, rows)
        assert rows[f"P{rank}"].rstrip().endswith("|")
    under = [line for line in lines if line.startswith("   ") and "[0." in line]
    assert [line.count("[0.0") for line in under] == [1, 1, 0, 0]
    assert [line.count("[0.1") for line in under] == [0, 0, 1, 1]
    assert "# computation (W)" in text and ". waiting" in text and "= communication" in text
    assert "time since the run began [ms]" in text


def test_nested_subgroups_get_one_line_per_depth_each_with_its_span_and_processors(tmp_path):
    """Seed 9 partitions machine 0 into 0.0 (P0-P2) and 0.1, and 0.0 twice more into two
    halves each (0.0.0 ... 0.0.3): under each processor, line d holds exactly its subgroups of
    depth d, each `[` at its entry column, `]` at its exit, labelled with its id and processors,
    a nested one inside its parent's span (was: drawn over its parent, garbling both)."""
    steps, result = run_of(tmp_path, random_run(9, 4, 2e-9, 5e-6), procs=4, g=2e-9, L=5e-6)
    rows = measured_rows(steps, result)
    assert max(m.count(".") for r in rows for m, _, _ in r.groups) == 2
    drawing = draw(rows, "t", 200)
    members = {}
    for row in rows:
        for machine, _, _ in row.groups:
            members.setdefault(machine, []).append(f"P{row.rank}")
    columns = 200 - len("P3 ")
    scale = columns / max(s.stop for r in rows for s in r.segments)
    labels = [label.strip() for label, _ in drawing.lines]
    for row in rows:
        at = labels.index(f"P{row.rank}")
        under = ["".join(g for g, _ in cells) for _, cells in drawing.lines[at + 1:at + 3]]
        assert [label for label, _ in drawing.lines[at + 1:at + 3]] == ["   ", "   "]
        for depth, line in enumerate(under, start=1):
            own = sorted((entry, machine, leave) for machine, entry, leave in row.groups
                         if machine.count(".") == depth)
            assert line.count("[") == line.count("]") == len(own), (row.rank, line)
            for entry, machine, leave in own:
                first = int(entry * scale)
                assert line[first:].startswith(f"[{machine} {','.join(members[machine])}")
                assert line.index("]", first) == max(int(leave * scale - 1e-9), first)
        if len(under[1].strip()):                                     # nested inside its parent
            assert under[0].index("[") <= under[1].index("[") and under[1].rindex("]") <= under[0].rindex("]")
    assert "one line per nesting depth" in drawing.text()


def test_a_subgroup_too_short_for_its_label_shows_the_end_of_its_id():
    """77 columns for 1 s: 0.0 spans 5 columns (room for its id), 0.1 two (none), 0.1.1.0 five
    (room for `.1.0`, which tells it from 0.1.1.1; its start `0.1.` would not)."""
    from llac.timeline import Row, Segment
    groups = (("0.0", 0.0, 0.06), ("0.1", 0.5, 0.51), ("0.1.1", 0.6, 0.95), ("0.1.1.0", 0.7, 0.76))
    drawing = draw([Row(0, (Segment("compute", 0.0, 1.0),), (1.0,), groups)], "t", 80)
    first, _, third = ("".join(g for g, _ in cells) for _, cells in drawing.lines[1:])
    assert first.startswith("[0.0]") and "[]" in first and first.count("[") == 2
    assert "[.1.0]" in third and "0.1." not in third


def test_the_drawing_shows_the_barrier_wait_as_a_sixth_of_the_row(tmp_path):
    steps, result = run_of(tmp_path, BARRIER)
    rows = picture(draw(measured_rows(steps, result), "t", 80))
    columns = 80 - len("P1 ")
    for row in rows.values():
        assert abs(row.count(".") - columns / 6) <= 1 and abs(row.count("#") - columns / 2) <= 2
    assert rows["P0"].index(".") < rows["P0"].index("|") < rows["P1"].index(".")


def test_colour_and_web_page(tmp_path):
    steps, result = run_of(tmp_path, BARRIER)
    drawing = draw(measured_rows(steps, result), "Figure 1 & barriers", 80)
    assert "\x1b[33m" in drawing.text(color=True) and "\x1b[" not in drawing.text()
    page = drawing.html()
    assert "<title>Figure 1 &amp; barriers</title>" in page and page.count("background:#e0b000") == 2


def llac(workdir, script, db=None):
    """`llac -c script` in `workdir`; the machine database is `db` (or one that does not exist)."""
    env = {**os.environ, "LLAC_MACHINE_DB": str(db or workdir / "none.sqlite")}
    return subprocess.run([sys.executable, "-m", "llac", "-c", script], cwd=workdir, env=env,
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)


GIVEN = f"with g={G}, L={L}"


def test_timeline_of_figure1_as_a_user_sees_it(tmp_path):
    write_pub_trace(tmp_path / "fig1.cll.2.dat", FIGURE1)
    done = llac(tmp_path, f'load "fig1.cll.2.dat"; timeline fig1 {GIVEN}; timeline fig1 model {GIVEN}')
    assert done.returncode == 0, done.stderr
    measured, model = done.stdout.split("timeline of run 1 of fig1, P=2")[1:]
    assert measured.startswith(" (measured): 2 supersteps") and model.startswith(" (the OBSP* model)")
    assert all(len(line) <= 80 for line in done.stdout.splitlines() if line.startswith(("P", "  ")))
    rows = [line for line in measured.splitlines() if line.startswith("P")]
    assert len(rows) == 2 and all(r.endswith("|") and r.count("|") == 2 and "." not in r for r in rows)
    assert "TIME 0.005 s measured, OBSP* 0.005 s, BSP 0.006 s" in measured
    assert "o = 0 s/message (g and L given; o = 0: no cost per message, as in the paper; L of bsp_sync = L (given): every superstep pays L); h = in max out" in measured


def test_g_and_L_come_from_the_probe_as_for_obsp(tmp_path):
    with MachineDB(tmp_path / "machines.sqlite") as db:
        db.store(probe_run())
    write_pub_trace(tmp_path / "fig1.cll.2.dat", FIGURE1)
    done = llac(tmp_path, 'load "fig1.cll.2.dat"; timeline fig1', tmp_path / "machines.sqlite")
    assert done.returncode == 0, done.stderr
    assert "g = 2e-09 s/byte, L = 4e-06 s, o = 0 s/message (g and L from the probe of node1@1 at P=2" in done.stdout


def sweep_trace(tmp_path, **options):
    """Figure 1 at N = 1000 and 2000, three runs each (1-3, 4-6), run 4 disturbed."""
    rows, records = figure1_sweep((1000, 2000), reps=3, slow={4}, **options)
    write_sweep_trace(tmp_path / "fig1.cll.2.dat", rows, records)


def titles(stdout):
    return [line for line in stdout.splitlines() if line.startswith("timeline of")]


@pytest.mark.parametrize("died", [{6}, {4, 5, 6}])
def test_runs_a_program_died_in_are_not_the_ones_drawn_by_default(tmp_path, died):
    """A program killed inside a run leaves it without its last superstep: by default timeline
    draws the last run it can evaluate (of the largest size that has one), and says why the
    others are left out; a run named explicitly is still drawn or refused as before."""
    rows, records = figure1_sweep((1000, 2000), reps=3)
    rows = [r for r in rows if not (r[0] in died and r[1] == 1 and r[4] == "end")]
    write_sweep_trace(tmp_path / "fig1.cll.2.dat", rows, records)
    done = llac(tmp_path, f'load "fig1.cll.2.dat"; timeline fig1 {GIVEN}; timeline f {GIVEN}')
    assert done.returncode == 0, done.stderr
    program, experiment = titles(done.stdout)
    last = max({1, 2, 3, 4, 5} - died)
    assert program.startswith(f"timeline of run {last} of fig1, P=2 (run 6, the last, is left out: the run did not end")
    size = 2000 if died == {6} else 1000
    assert experiment.startswith(f"timeline of run ") and f"of f, P=2, N={size} (runs that cannot be drawn" in experiment
    assert int(experiment.split()[3]) not in died
    done = llac(tmp_path, f'load "fig1.cll.2.dat"; timeline fig1 run=6 {GIVEN}')
    assert done.returncode == 1 and "run 6: the run did not end" in done.stderr, done.stderr


def test_a_sync_experiment_picks_its_run_by_size_representative_or_named(tmp_path):
    sweep_trace(tmp_path)
    done = llac(tmp_path, f'load "fig1.cll.2.dat"; timeline f {GIVEN}; timeline f N=1000 {GIVEN}; '
                          f'timeline f run=4 {GIVEN}; small = f where N < 1500; timeline small P=2 {GIVEN}; '
                          f'set aggregate median; timeline f {GIVEN}')
    assert done.returncode == 0, done.stderr
    assert [t.split(" (")[0] for t in titles(done.stdout)] == [
        "timeline of run 5 of f, P=2, N=2000", "timeline of run 1 of f, P=2, N=1000",
        "timeline of run 4 of f, P=2, N=2000", "timeline of run 1 of small, P=2, N=1000",
        "timeline of run 6 of f, P=2, N=2000"]
    programs = llac(tmp_path, f'load "fig1.cll.2.dat"; timeline fig1 {GIVEN}; timeline fig1 run=2 P=2 {GIVEN}')
    assert [t.split(" (")[0] for t in titles(programs.stdout)] == [
        "timeline of run 6 of fig1, P=2", "timeline of run 2 of fig1, P=2"], programs.stderr


def test_to_a_file_text_or_web_page_kept_unless_replace(tmp_path):
    write_pub_trace(tmp_path / "fig1.cll.2.dat", FIGURE1)
    done = llac(tmp_path, f'load "fig1.cll.2.dat"; timeline fig1 {GIVEN} to "t.txt"; '
                          f'timeline fig1 model {GIVEN} to "t.html"')
    assert done.returncode == 0, done.stderr
    assert "wrote the timeline of run 1 of fig1, P=2 to t.txt (text)" in done.stdout
    text = (tmp_path / "t.txt").read_text()
    assert text.startswith("timeline of run 1 of fig1") and max(map(len, text.splitlines()[:4])) == 80
    assert "<pre>P0 <span" in (tmp_path / "t.html").read_text()
    again = llac(tmp_path, f'load "fig1.cll.2.dat"; timeline fig1 {GIVEN} to "t.txt"')
    assert again.returncode == 1 and "the file exists; write `replace`" in again.stderr
    replaced = llac(tmp_path, f'load "fig1.cll.2.dat"; timeline fig1 model {GIVEN} to "t.txt" replace')
    assert replaced.returncode == 0 and "(the OBSP* model)" in (tmp_path / "t.txt").read_text()


@pytest.mark.parametrize("script, message", [
    ('timeline fig1', "no experiment or program with supersteps called 'fig1' (programs with supersteps: none"),
    ('load "fig1.cll.2.dat"; timeline fig', "did you mean 'fig1'?"),
    (f'load "fig1.cll.2.dat"; timeline fig1 P=4 {GIVEN}', "fig1 has no supersteps at P=4 (loaded: P=2)"),
    (f'load "fig1.cll.2.dat"; timeline fig1 run=3 {GIVEN}', "fig1 has no run 3 at P=2 (its runs: 1)"),
    (f'load "fig1.cll.2.dat"; timeline fig1 run=2.5 {GIVEN}', "run=2.5 is not a whole number >= 1"),
    (f'load "fig1.cll.2.dat"; timeline fig1 N=8 {GIVEN}', "no 'N' to pick a run by (a program's runs are picked"),
    (f'load "fig1.cll.2.dat"; timeline fig1 P=2 P=2 {GIVEN}', "timeline: P is given twice"),
    (f'load "fig1.cll.2.dat"; timeline fig1 model model {GIVEN}', "timeline option 'model' given twice"),
    (f'load "bad.cll.2.dat"; timeline fig1 {GIVEN}',
     "bad.cll.2.dat, run 1: in machine 0, rank 1 made 1 supersteps and rank 0 2"),
    ('load "fig1.cll.2.dat"; timeline fig1 on node9 with g=1e-9, L=1e-6',
     "timeline fig1 ... on node9: with both g and L given, the machine has nothing left to give"),
    ('load "fig1.cll.2.dat"; timeline fig1', "was never probed"),
    (f'load "fig1.cll.2.dat"; timeline fig1 {GIVEN} to "t.png"', "name a .txt file (text) or an .html file"),
    (f'load "matinit.cll.1.dat"; timeline colinit {GIVEN}', "colinit has no run column"),
    (f'load "sweep.cll.2.dat"; timeline f N=3 {GIVEN}', "f has no run with N=3 (its runs: P=2, N=1000: 1, 2, 3;"),
    (f'load "sweep.cll.2.dat"; timeline f runs=3 {GIVEN}',
     "no 'runs' to pick a run by (did you mean 'run'?) (f's runs are picked by P, run, N)"),
    (f'load "sweep.cll.2.dat"; timeline f N=1000 run=5 {GIVEN}', "f has no run with N=1000, run=5"),
    (f'load "sweep.cll.2.dat"; timeline f P=3 {GIVEN}', "f has no runs at P=3 (its P: 2)"),
])
def test_mistakes_are_one_clear_message(tmp_path, script, message):
    write_pub_trace(tmp_path / "fig1.cll.2.dat", FIGURE1)
    write_pub_trace(tmp_path / "bad.cll.2.dat", FIGURE1[:3])
    write_matinit(tmp_path / "matinit.cll.1.dat")
    rows, records = figure1_sweep((1000, 2000), reps=3)
    write_sweep_trace(tmp_path / "sweep.cll.2.dat", rows, records, program="sweep")
    with MachineDB(tmp_path / "machines.sqlite") as db:
        db.store(probe_run(host="node9"))           # not the machine the traces were measured on
    done = llac(tmp_path, script, tmp_path / "machines.sqlite")
    assert done.returncode == 1 and message in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert len(done.stderr.splitlines()) == 3, done.stderr       # the message, the line, the caret


def test_a_run_without_supersteps_is_left_out_not_blamed_for_the_run_asked_for(tmp_path):
    """A review: when one run of f had no supersteps (its program died before writing them),
    `timeline f run=1` said "run 4 of f has no supersteps", whatever run was asked for."""
    rows, records = figure1_sweep((1000, 2000), reps=3)
    write_sweep_trace(tmp_path / "sweep.cll.2.dat", [r for r in rows if r[0] != 6], records, program="sweep")
    asked = llac(tmp_path, f'load "sweep.cll.2.dat"; timeline f run=1 {GIVEN}')
    assert asked.returncode == 0 and titles(asked.stdout)[0].startswith("timeline of run 1 of f, P=2, N=1000"), \
        asked.stderr
    chosen = llac(tmp_path, f'load "sweep.cll.2.dat"; timeline f {GIVEN}')
    assert chosen.returncode == 0 and "(runs that cannot be drawn are left out: run 6 has no supersteps in " \
        "sweep.cll.2.dat)" in titles(chosen.stdout)[0], chosen.stderr
    missing = llac(tmp_path, f'load "sweep.cll.2.dat"; timeline f run=6 {GIVEN}')
    assert missing.returncode == 1 and "run 6 of f has no supersteps in sweep.cll.2.dat" in missing.stderr


def test_tab_offers_the_names_and_selectors(tmp_path, monkeypatch):
    from llac.completion import candidates
    sweep_trace(tmp_path)
    monkeypatch.chdir(tmp_path)
    session = Session()
    list(session.execute('load "fig1.cll.2.dat"'))
    assert candidates(session, "timeline ") == ["f", "fig1"]
    assert candidates(session, "timeline f N=1000 ") == ["model", "P=", "run=", "on", "sum", "to", "with"]
    assert candidates(session, "timeline fig1 model ") == ["P=", "run=", "on", "sum", "to", "with"]
    assert candidates(session, "timeline f with ") == ["g=", "L=", "o="]


WORDS = ["f", "fig1", "fig", "colinit", "nope", "P=2", "P=3", "P=0", "P=-1", "P=1e400", "run=1", "run=6",
         "run=0", "run=2.5", "N=1000", "N=2000", "N=7", "x=1", "model", "sum", "on node1", "on nowhere",
         "with g=5e-7, L=5e-4", "with g=1e-9", "with L=0", 'to "t.txt"', 'to "t.html" replace',
         'to "t.png"', 'to ""', 'to "nodir/t.txt"', "to", "=", ",", "with"]


@pytest.fixture(scope="module")
def fuzzdir(tmp_path_factory):
    path = tmp_path_factory.mktemp("timeline")
    write_matinit(path / "matinit.cll.1.dat")
    rows, records = figure1_sweep((1000, 2000), reps=3, slow={4})
    write_sweep_trace(path / "fig1.cll.2.dat", rows, records)
    return path


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(words=st.lists(st.sampled_from(WORDS), max_size=6))
def test_any_arguments_give_a_timeline_or_a_located_one_line_error(fuzzdir, words, monkeypatch):
    monkeypatch.setenv("LLAC_MACHINE_DB", str(fuzzdir / "none.sqlite"))
    source = "timeline " + " ".join(words)
    with contextlib.chdir(fuzzdir):
        session = Session()
        list(session.execute('load "matinit.cll.1.dat", "fig1.cll.2.dat"'))
        try:
            for result in session.execute(source):
                render(result)
        except LlacError as error:
            assert "\n" not in error.message and error.message.strip(), error.message
            assert error.span is not None and error.span.line == 1, error.message
        finally:
            for name in ("t.txt", "t.html"):
                with contextlib.suppress(FileNotFoundError):
                    os.remove(fuzzdir / name)


def test_the_docs_show_what_timeline_draws(tmp_path):
    """docs/parallel-analysis.md, "Timeline": its two drawings are this llac's output on the
    worked examples (Figure 1, the partition)."""
    from pathlib import Path
    doc = (Path(__file__).resolve().parent.parent / "docs" / "parallel-analysis.md").read_text()
    write_pub_trace(tmp_path / "fig1.cll.2.dat", FIGURE1)
    write_pub_trace(tmp_path / "fig1.cll.4.dat", PARTITION, procs=4)
    done = llac(tmp_path, 'load "fig1.cll.*.dat"; timeline fig1 P=2 with g=5e-7, L=5e-4; '
                          'timeline fig1 with g=1e-6, L=1e-4')
    assert done.returncode == 0, done.stderr
    drawings = [d for d in done.stdout.split("\n\n") if d.strip()]
    assert len(drawings) == 2
    for drawing in drawings:
        body = "\n".join(line for line in drawing.splitlines() if not line.startswith("kept "))
        assert f"```\n{body.strip()}\n```" in doc, body
