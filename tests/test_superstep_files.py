"""The supersteps of one execution spread over the gathered trace and the `.rank<r>` traces of
ranks that were not gathered (docs/pub.md, "Ranks that are not gathered"): llac combines the
files of one execution on the gathered trace's clock, leaves out another execution's, names
the processors a run lacks and a run that did not end, and never raises on damaged or
truncated superstep lines (hypothesis). The real runtime's files: tests/test_pub_faults.py."""
from __future__ import annotations

import contextlib
import subprocess
import sys
from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from llac.errors import LlacError
from llac.obsp import ObspError, evaluate
from llac.session import Session
from llac.superstep_files import combine
from llac.trace import TraceError, read_trace
from support.supersteps import G, L, PARTITION, step_line

# The partition example, each processor ending the run (the sync experiment's end) right after
# its last superstep, as the runtime writes a run
ROWS = PARTITION + [(r, "0", 3, "end", 0.0, 0, 0, e, "-") for r, m, s, _, _, _, _, e, _ in PARTITION
                    if (m, s) == ("0", 2)]
EXECUTION = "4242 1000.000000001"
START = 5000.0           # the run's common start on rank 0's clock (seconds)


def trace_text(rows, procs=4, status="complete", origin=None, starts=(START,), execution=EXECUTION,
               ranks=None) -> str:
    """A PUB trace of these superstep rows, as the runtime writes it: gathered (`origin` None,
    ENDs from the common start) or a rank's own (`origin` its rank, ENDs from its own start)."""
    head = [f"#cll-trace 1", "#program: part", "#host: node1", "#cpu: Test CPU 9000", "#parallel: PUB",
            f"#procs: {procs}", f"#status: {status}", f"#execution: {execution}",
            "#supersteps: run rank machine step sync W in out end partners", "#superstep_runs: f"]
    if ranks is not None:
        head.append("#ranks: " + " ".join(map(str, ranks)))
    if origin is not None:
        head.append(f"#superstep_origin: rank {origin}")
    if starts:
        head.append("#superstep_starts: " + " ".join(f"{s:.9f}" for s in starts))
    return "\n".join([*head, "#data", *map(step_line, rows), "#end"]) + "\n"


def own_rows(rank: int, late: float) -> list[tuple]:
    """Rank `rank`'s rows of ROWS as its own trace holds them, had it left the run's
    barrier `late` seconds after the first processor (its first W of machine 0 and every END
    measured from its own start)."""
    own = []
    for r, machine, step, sync, W, inbound, outbound, end, partners in ROWS:
        if r == rank:
            first = machine == "0" and step == 1
            own.append((r, machine, step, sync, W - late if first else W, inbound, outbound, end - late, partners))
    return own


def load(tmp_path, files: dict[str, str]):
    """Write the traces and load them all in one session; its notes and supersteps at P=4."""
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    session = Session()
    notes = run(session, tmp_path, 'load "part.cll.4*.dat"')
    return [str(n) for n in notes], session.supersteps["part"][4]


def run(session: Session, folder, source: str) -> list:
    """The results of `source` run in `session` with `folder` as the working directory."""
    with contextlib.chdir(folder):
        return list(session.execute(source))


def test_a_rank_file_of_the_same_execution_completes_the_gathered_run_on_its_clock(tmp_path):
    late = 4e-4              # rank 3 left the barrier 0.4 ms after the first processor
    gathered = trace_text([r for r in ROWS if r[0] != 3], status="incomplete: ranks 3 did not report",
                          ranks=(0, 1, 2))
    rank3 = trace_text(own_rows(3, late), origin=3, starts=(START + late,),
                       status="incomplete: rank 0 did not collect this rank's records")
    notes, steps = load(tmp_path, {"part.cll.4.dat": gathered, "part.cll.4.rank3.dat": rank3})
    assert any("added the supersteps of rank 3 from" in n and "(one execution): 20 records" in n for n in notes)
    combined = evaluate(steps, 1, G, L)
    whole = evaluate(replace(steps, steps=tuple(replace(s, line=0) for s in read_trace(
        "all", text=trace_text(ROWS)).supersteps.steps)), 1, G, L)
    assert combined.obsp == pytest.approx(whole.obsp, rel=1e-9) and combined.measured == pytest.approx(whole.measured)
    assert combined.ends == pytest.approx(whole.ends)
    as_written = {(s.rank, s.machine, s.step): (s.W, s.end) for s in steps.steps}
    assert as_written == {(r, m, s): pytest.approx((W, e), abs=1e-9) for r, m, s, _, W, _, _, e, _ in ROWS}


def test_an_earlier_rank_file_moves_the_runs_start_back(tmp_path):
    """A rank that left the barrier before every gathered one: the common start is its own, and
    the gathered ranks' first W and ENDs grow by the difference."""
    early = 2e-4
    gathered = [(r, m, s, k, W - early if (m, s) == ("0", 1) else W, i, o, e - early, p)
                for r, m, s, k, W, i, o, e, p in ROWS if r != 3]
    kept = read_trace("g", text=trace_text(gathered, starts=(START + early,))).supersteps
    new = read_trace("r", text=trace_text(own_rows(3, 0.0), origin=3)).supersteps
    both, doubles = combine(kept, new)
    assert doubles == [] and both.starts == (START,) and both.origin is None
    assert evaluate(both, 1, G, L).ends == pytest.approx(
        evaluate(read_trace("all", text=trace_text(ROWS)).supersteps, 1, G, L).ends)


def test_another_executions_rank_file_is_left_out_and_a_rank_held_twice_is_named(tmp_path):
    gathered = trace_text([r for r in ROWS if r[0] != 3], status="incomplete: ranks 3 did not report")
    stale = trace_text(own_rows(3, 0.0), origin=3, execution="99 1.5")
    notes, steps = load(tmp_path, {"part.cll.4.dat": gathered, "part.cll.4.rank3.dat": stale})
    assert any("rank 3's own supersteps are of another execution than those of part at P=4" in n for n in notes)
    assert {s.rank for s in steps.steps} == {0, 1, 2}
    twice = trace_text(own_rows(3, 0.0) + own_rows(2, 0.0), origin=3)
    notes, steps = load(tmp_path, {"part.cll.4.dat": gathered, "part.cll.4.rank3.dat": twice})
    assert any("rank 2's supersteps of run 1 are in" in n and "are left out" in n for n in notes)
    assert len(steps.steps) == len(ROWS)


def test_a_run_without_some_processors_names_them_and_their_files(tmp_path):
    gathered = trace_text([r for r in ROWS if r[0] not in (1, 3)],
                          status="incomplete: ranks 1,3 did not report")
    (tmp_path / "part.cll.4.dat").write_text(gathered)
    done = subprocess.run([sys.executable, "-m", "llac", "-c", f'load "part.cll.4.dat"; obsp part with g={G}, L={L}'],
                          cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "Traceback" not in done.stderr
    assert ("P=4: not evaluated: part.cll.4.dat, run 1: the supersteps of ranks 1,3 are missing (the trace's "
            "status: incomplete: ranks 1,3 did not report); a rank that is not gathered writes them to its own "
            "trace (part.cll.4.rank1.dat, part.cll.4.rank3.dat): load the traces of the execution together, "
            'e.g. load "part.cll.4*.dat"') in done.stdout
    alone = read_trace("part.cll.4.rank3.dat", text=trace_text(own_rows(3, 0.0), origin=3)).supersteps
    with pytest.raises(ObspError, match=r"ranks 0,1,2 are missing \(part.cll.4.rank3.dat holds rank 3's own "
                                        r"records only\).*\(part.cll.4.dat, part.cll.4.rank1.dat, "):
        evaluate(alone, 1, G, L)


def test_a_rank_whose_own_trace_is_loaded_but_holds_none_of_the_run_is_said_to_have_stopped():
    """Its own file combined with the gathered one (it held supersteps of earlier runs), yet none
    of this run (review 28: the message asked to load the file that was loaded)."""
    from dataclasses import replace
    from llac.superstep_files import missing_processors
    gathered = read_trace("part.cll.4.dat", text=trace_text([r for r in ROWS if r[0] != 3],
                                                            status="MPI_Abort with errorcode 1")).supersteps
    both = replace(gathered, path="part.cll.4.dat + part.cll.4.rank3.dat")
    assert missing_processors(both, {0, 1, 2}) == (
        "the run did not end: rank 3 finished no superstep of it (its own trace is loaded and holds none of its "
        "supersteps: part.cll.4.rank3.dat): the program stopped inside the run (the trace's status: MPI_Abort "
        "with errorcode 1)")
    assert "load the traces of the execution together" in missing_processors(gathered, {0, 1, 2})


def test_a_run_the_program_stopped_inside_is_named_not_evaluated():
    cut = [r for r in ROWS if not (r[1] == "0" and r[2] > 1)]     # every rank stopped in superstep 2
    stopped = read_trace("t.dat", text=trace_text(cut, status="signal SIGTERM")).supersteps
    with pytest.raises(ObspError, match=r"t.dat, run 1: the run did not end: ranks 0,1,2,3 made no superstep of "
                                        r"machine 0 ending in end \(rank 0's last is superstep 1, ending in part\)"
                                        r": the program stopped inside the run \(the trace's status: signal SIGTERM\)"):
        evaluate(stopped, 1, G, L)


@pytest.mark.parametrize("key, value, message", [
    ("superstep_origin", "rank", "'#superstep_origin: rank' is not 'rank R'"),
    ("superstep_origin", "rank 9", "'#superstep_origin: rank 9' rank 9 is not a rank of this run (P = 4)"),
    ("superstep_starts", "5000.0 nan", "#superstep_starts: start nan is not a finite number"),
])
def test_a_damaged_reference_is_a_problem_and_the_file_is_not_combined(tmp_path, key, value, message):
    gathered = trace_text([r for r in ROWS if r[0] != 3])
    rank3 = trace_text(own_rows(3, 0.0), origin=3).replace(f"#{key}: ", f"#{key}: {value}\n#was_{key}: ")
    notes, steps = load(tmp_path, {"part.cll.4.dat": gathered, "part.cll.4.rank3.dat": rank3})
    assert any(message in n for n in notes), notes
    assert {s.rank for s in steps.steps} == {0, 1, 2}
    assert any("its supersteps are not added to those of part at P=4" in n or "another execution" in n
               for n in notes), notes


ORIGINAL = trace_text(own_rows(3, 1e-4) + own_rows(2, 2e-4), origin=3, starts=(START, START + 1))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cut=st.integers(0, len(ORIGINAL)))
def test_a_trace_cut_anywhere_loads_only_original_supersteps(cut):
    try:
        trace = read_trace("t.dat", text=ORIGINAL[:cut])
    except TraceError:
        return
    whole = {s.line: replace(s, line=0) for s in read_trace("t.dat", text=ORIGINAL).supersteps.steps}
    for step in (trace.supersteps.steps if trace.supersteps else ()):
        assert replace(step, line=0) == whole[step.line]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(line=st.integers(0, 7), cut=st.integers(0, 80), second=st.booleans())
def test_a_superstep_line_cut_short_never_raises_in_load_obsp_or_timeline(tmp_path_factory, line, cut, second):
    lines = ORIGINAL.split("\n")
    steps = [i for i, text in enumerate(lines) if text.startswith("@step") or text.startswith("#superstep_")]
    at = steps[line % len(steps)]
    lines[at] = lines[at][:cut]
    folder = tmp_path_factory.mktemp("cut")
    (folder / "part.cll.4.rank3.dat").write_text("\n".join(lines))
    if second:
        (folder / "part.cll.4.dat").write_text(trace_text([r for r in ROWS if r[0] not in (2, 3)]))
    session = Session()
    for source in ('load "part.cll.4*.dat"', f"obsp part with g={G}, L={L}",
                   f"timeline part with g={G}, L={L}"):
        try:
            run(session, folder, source)
        except LlacError:
            pass
