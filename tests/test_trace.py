"""The trace reader on hand-written traces: the documented example, interleaving, every kind of
damage with its exact line number, and big generated traces (bulk path and bisection)."""
import re
from pathlib import Path

import numpy as np
import pytest

from cll_grammar.formula import parse_formula
from llac.experiment import Experiment
from llac.trace import Problem, TraceError, read_trace, read_traces, write_trace

DOC = Path(__file__).resolve().parent.parent / "docs" / "trace-format.md"

HEADER = """#cll-trace 1
#program: matinit
#procs: 1
#status: complete
#experiment: rowinit
#  formula: rowinit[0] + rowinit[1]*N + rowinit[2]*N*N
#  columns: rank thread time N
#experiment: colinit
#  formula: colinit[0] + colinit[1]*N
#  columns: rank thread time N
#data
"""
FIRST_RECORD_LINE = 12


def doc_example() -> str:
    """The example trace in docs/trace-format.md, as text."""
    return re.search(r"```\n(#cll-trace.*?)```", DOC.read_text(), re.S).group(1)


def load(text: str) -> "Trace":  # noqa: F821
    return read_trace("t.dat", text=text)


def messages(trace) -> list[str]:
    return [str(p).rpartition("/")[2] for p in trace.problems]


def test_doc_example_loads_completely():
    trace = load(doc_example())
    assert trace.complete and trace.problems == ()
    assert trace.header["program"] == "matinit" and trace.header["timer"] == "tsc"
    row, col = trace.experiments["rowinit"], trace.experiments["colinit"]
    assert row.column_names == ("rank", "thread", "time", "N")
    assert row.columns["N"].tolist() == [16, 32, 64]
    assert row.columns["time"].tolist() == [2.1300000000000001e-07, 6.78e-07, 2.541e-06]
    assert col.columns["time"].tolist() == [2.3199999999999999e-07, 9.12e-07]
    assert row.formula.variables == ("N",) and row.formula.name == "rowinit"
    assert row.header["source"] == "matinit.c:31:1" and row.header["procs"] == "1"
    assert row.header["records"] == "3" and row.origin == "t.dat"


def test_read_from_file_and_globs(tmp_path):
    for p in (1, 2):
        (tmp_path / f"m.cll.{p}.dat").write_text(doc_example().replace("#procs: 1", f"#procs: {p}"))
    traces = read_traces([str(tmp_path / "m.cll.*.dat")])
    assert [t.header["procs"] for t in traces] == ["1", "2"]
    assert traces[0].path.endswith("m.cll.1.dat")
    with pytest.raises(TraceError, match=r"no file matches '.*nothing\*\.dat'"):
        read_traces([str(tmp_path / "nothing*.dat")])


def test_interleaved_records_keep_file_order():
    body = "".join(f"{'rowinit' if i % 3 else 'colinit'} 0 {i % 2} {i}e-6 {i}\n" for i in range(6000))
    trace = load(HEADER + body + "#end\n")
    assert trace.problems == () and trace.complete
    row, col = trace.experiments["rowinit"], trace.experiments["colinit"]
    assert row.columns["N"].tolist() == [i for i in range(6000) if i % 3]
    assert col.columns["N"].tolist() == list(range(0, 6000, 3))
    assert col.columns["thread"].tolist() == [i % 2 for i in range(0, 6000, 3)]


@pytest.mark.parametrize("text, kind", [
    ("", "is empty"), ("\n\n", "is empty"),
    ("time,N\n1,2\n", "not a CALL trace"), ("\x7fELF\x02\x01\x00\x00", "not a CALL trace"),
    ("#cll-trace 2\n#data\n#end\n", "version 2; this llac reads version 1 only"),
    ("#cll-trace\n#data\n#end\n", r"version \(none\)"),
])
def test_unreadable_files_raise_one_sentence(text, kind):
    with pytest.raises(TraceError, match=kind) as err:
        load(text)
    assert "'t.dat'" in str(err.value) and "\n" not in str(err.value)


def test_missing_file_is_a_trace_error(tmp_path):
    with pytest.raises(TraceError, match=r"cannot read '.*nope\.dat': No such file"):
        read_trace(tmp_path / "nope.dat")


def test_damaged_records_reported_with_line_numbers_and_good_ones_kept():
    n = FIRST_RECORD_LINE
    records = ["rowinit 0 0 1e-6 16",       # n: good
               "rowinit 0 0 1e-6",          # n+1: a field missing
               "rowinit 0 0 x1e-6 32",      # n+2: not a number
               "foo 0 0 1 2",               # n+3: unknown experiment
               "colinit 0 0 nan 64",        # n+4: NaN is a value
               "rowinit 0 0 2e-6 64 7",     # n+5: a field too many
               "colinit\t0 0 inf 128",      # n+6: a TAB: a damaged record
               "foo 1 1 1 1",               # n+7: unknown again (summarised)
               "",                          # n+8: a blank line is reported once
               "colinit 0 0 inf 128",       # n+9: inf is a value
               "rowinit 0 0 3e-6 128"]      # n+10: good
    trace = load(HEADER + "\n".join(records) + "\n#end\n")
    assert messages(trace) == [
        f"t.dat:{n + 1}: record of 'rowinit' has 3 values, expected 4 (rank thread time N); it is ignored",
        f"t.dat:{n + 2}: record of 'rowinit': 'x1e-6' is not a number (column time); it is ignored",
        f"t.dat:{n + 3}: record of unknown experiment 'foo' (and 1 more lines) is ignored",
        f"t.dat:{n + 5}: record of 'rowinit' has 5 values, expected 4 (rank thread time N); it is ignored",
        f"t.dat:{n + 6}: record of 'colinit' has a TAB at column 8 (values are separated by single spaces); "
        "it is ignored",
        f"t.dat:{n + 8}: blank line among the records: the trace may be damaged (a value cut short by a line break)",
    ]
    assert trace.complete
    assert trace.experiments["rowinit"].columns["N"].tolist() == [16, 128]
    col_time = trace.experiments["colinit"].columns["time"]
    assert np.isnan(col_time[0]) and np.isinf(col_time[1])


def test_truncated_last_line_and_missing_end():
    trace = load(HEADER + "rowinit 0 0 1e-6 16\nrowinit 0 0 2e-6 32\nrowinit 0 0 3e")
    assert messages(trace) == [
        f"t.dat:{FIRST_RECORD_LINE + 2}: the last record is cut short (no end of line): it is ignored",
        f"t.dat:{FIRST_RECORD_LINE + 2}: the file has no #end line: it was cut short, some records may be missing"]
    assert not trace.complete
    assert trace.experiments["rowinit"].columns["N"].tolist() == [16, 32]
    assert len(trace.experiments["colinit"]) == 0


def test_missing_end_after_complete_lines():
    trace = load(HEADER + "rowinit 0 0 1e-6 16\n")
    assert messages(trace) == [f"t.dat:{FIRST_RECORD_LINE + 1}: the file has no #end line: "
                               "it was cut short, some records may be missing"]
    assert not trace.complete and len(trace.experiments["rowinit"]) == 1


def test_end_without_final_newline_is_complete_and_text_after_end_is_reported():
    assert load(HEADER + "rowinit 0 0 1e-6 16\n#end").complete
    trace = load(HEADER + "rowinit 0 0 1e-6 16\n#end\nrowinit 0 0 1e-6 32\n")
    assert trace.complete and len(trace.experiments["rowinit"]) == 1
    assert messages(trace) == [f"t.dat:{FIRST_RECORD_LINE + 2}: 1 line(s) after #end are ignored"]


def test_file_cut_in_its_header():
    trace = load(HEADER.split("#experiment: colinit")[0])
    assert messages(trace) == ["t.dat:8: the header is not followed by a #data line: "
                               "the file was cut short or damaged, no records are read"]
    assert not trace.complete and list(trace.experiments) == ["rowinit"]


def test_a_program_that_never_reached_report_ended_normally():
    """`exit-without-report`: the program returned from main without reaching `report`, and the
    runtime wrote every record at exit; call calls that a normal end, and so does llac."""
    trace = load(HEADER.replace("#status: complete", "#status: exit-without-report")
                 + "rowinit 0 0 1e-6 16\ncolinit 0 0 1e-6 16\n#end\n")
    assert messages(trace) == [] and trace.header["status"] == "exit-without-report"


def test_bad_header_entries_skip_only_their_experiment():
    text = (HEADER.replace("colinit[0] + colinit[1]*N", "colinit[0] * colinit[1]*N")
            .replace("#procs: 1", "#procs: 1\nprocs 2")
            .replace("#status: complete", "#status: signal SIGSEGV"))
    trace = load(text + "rowinit 0 0 1e-6 16\ncolinit 0 0 1e-6 16\ncolinit 0 0 1e-6 32\n#end\n")
    got = messages(trace)
    assert got[0] == "t.dat:4: not a header line (expected '#key: value'): 'procs 2'"
    assert got[1] == "t.dat:5: the program did not finish normally (status: signal SIGSEGV)"
    assert re.fullmatch(r"t\.dat:10: experiment 'colinit': bad formula at column \d+ of the formula: .+ "
                        r"\(the experiment and its records are ignored\)", got[2])
    assert got[3] == ("t.dat:14: records of experiment 'colinit' are ignored (and 1 more lines): "
                      "its header at line 9 is invalid")
    assert len(got) == 4 and list(trace.experiments) == ["rowinit"]


@pytest.mark.parametrize("edit, line, message", [
    (("#  columns: rank thread time N\n#experiment: colinit", "#  columns: rank thread N\n#experiment: colinit"),
     7, "experiment 'rowinit': the columns lack time"),
    (("#  formula: colinit[0] + colinit[1]*N\n", ""), 8, "experiment 'colinit': its header has no 'formula:' line"),
    (("#  columns: rank thread time N\n#data", "#  columns: rank time time N\n#data"),
     10, "experiment 'colinit': column 'time' is listed twice"),
])
def test_invalid_declarations(edit, line, message):
    trace = load(HEADER.replace(*edit) + "#end\n")
    assert messages(trace)[0].startswith(f"t.dat:{line}: {message}")


def test_record_count_mismatch():
    text = HEADER.replace("#  columns: rank thread time N\n#experiment: colinit",
                          "#  columns: rank thread time N\n#  records: 3\n#experiment: colinit")
    trace = load(text + "rowinit 0 0 1e-6 16\n#end\n")
    assert messages(trace) == ["t.dat:8: experiment 'rowinit': the header announces 3 records but 1 were loaded"]


def test_record_count_mismatch_counts_the_records_left_out_apart():
    text = HEADER.replace("#  columns: rank thread time N\n#experiment: colinit",
                          "#  columns: rank thread time N\n#  records: 4\n#experiment: colinit")
    trace = load(text + "rowinit 0 0 1e-6 16\nrowinit 0 0 1e-6 nan\n#end\n")
    assert messages(trace)[0] == ("t.dat:8: experiment 'rowinit': the header announces 4 records but 1 "
                                  "were loaded and 1 left out, each named with its line")
    assert "t.dat:" in messages(trace)[1] and "N = nan is not a finite number" in messages(trace)[1]
    exact = load(text.replace("records: 4", "records: 2") + "rowinit 0 0 1e-6 16\nrowinit 0 0 1e-6 nan\n#end\n")
    assert len(messages(exact)) == 1 and "announces" not in messages(exact)[0]


def big_experiment(name: str, n: int, seed: int) -> Experiment:
    rng = np.random.default_rng(seed)
    return Experiment(name, parse_formula(f"{name}[0] + {name}[1]*N", experiment=name),
                      {"rank": rng.integers(0, 4, n), "thread": np.zeros(n), "time": rng.random(n) * 1e-3,
                       "N": 2.0 ** rng.integers(4, 20, n), "bytes": rng.random(n)})


def test_write_trace_round_trips_exactly(tmp_path):
    exps = [big_experiment("a", 20000, 1), big_experiment("b", 30000, 2)]
    write_trace(exps, tmp_path / "x.dat", header={"procs": "4"})
    trace = read_trace(tmp_path / "x.dat")
    assert trace.problems == () and trace.complete and trace.header["procs"] == "4"
    for exp in exps:
        got = trace.experiments[exp.name]
        assert got.column_names == ("rank", "thread", "time", "N", "bytes")
        for c in exp.column_names:
            assert np.array_equal(got.columns[c], exp.columns[c])


def test_big_trace_with_scattered_damage_is_bisected(tmp_path):
    exp = big_experiment("a", 50000, 3)
    write_trace([exp], tmp_path / "x.dat")
    lines = (tmp_path / "x.dat").read_text().split("\n")
    first = lines.index("#data") + 1
    bad = [first + 10, first + 31000, first + 49999]        # 0-based indices of damaged lines
    for i in bad:
        lines[i] = lines[i].replace(" ", " z", 1)[:-3] + "q"
    (tmp_path / "x.dat").write_text("\n".join(lines))
    trace = read_trace(tmp_path / "x.dat")
    damaged = trace.problems        # each named at its line; the header's count agrees with them
    assert not any("announces" in m for m in messages(trace))
    assert [p.line for p in damaged] == [i + 1 for i in bad]
    assert all(type(p.line) is int and "is not a number" in p.message for p in damaged)
    keep = np.ones(50000, bool)
    keep[[i - first for i in bad]] = False
    assert np.array_equal(trace.experiments["a"].columns["time"], exp.columns["time"][keep])


def test_many_damaged_records_are_summarised():
    body = "".join(f"rowinit 0 0 x {i}\n" for i in range(60))
    trace = load(HEADER + body + "#end\n")
    assert len(trace.problems) == 51
    assert str(trace.problems[-1]) == f"t.dat:{FIRST_RECORD_LINE + 50}: 10 more damaged records are ignored (not listed)"


def test_problem_str():
    assert str(Problem("a.dat", 7, "bad")) == "a.dat:7: bad"


def test_interleaved_damage_is_found_by_bisection():
    body = "".join(f"{'rowinit' if i % 2 else 'colinit'} 0 0 {'1e-6' if i != 4001 else '1e-6e'} {i}\n"
                   for i in range(5000))
    trace = load((HEADER + body + "#end\n").replace("\n", "\r\n"))     # a file with \r\n line ends
    assert messages(trace) == [f"t.dat:{FIRST_RECORD_LINE + 4001}: record of 'rowinit': '1e-6e' is not a number "
                               "(column time); it is ignored"]
    assert trace.experiments["rowinit"].columns["N"].tolist() == [i for i in range(1, 5000, 2) if i != 4001]
    assert len(trace.experiments["colinit"]) == 2500


def test_benchmark_command_runs(tmp_path):
    import subprocess
    import sys
    bench = Path(__file__).resolve().parent.parent / "benchmarks" / "trace_load"
    out = subprocess.run([sys.executable, str(bench), "20000"], capture_output=True, text=True, check=True).stdout
    assert re.search(r"^20000 records, [\d.]+ MB\nbaseline \(read \+ split\): [\d.]+ s per million records\n"
                     r"read_trace: +[\d.]+ s per million records \([\d.]+x baseline\)\n$", out)


def damaged_pair(lines: list[str]) -> list[str]:
    """Issue 8 item 1's two compensating one-byte damages: a byte inside line 101's time turned
    into a TAB (one word more) and line 121's rank turned into a TAB (one word less)."""
    lines = list(lines)
    lines[101] = lines[101].replace("2.13000000", "2.13000\t00", 1)
    lines[121] = lines[121].replace("rowinit 0 ", "rowinit \t ", 1)
    return lines


@pytest.mark.parametrize("interleaved", [True, False])
def test_compensating_damage_never_shifts_values_between_records(interleaved):
    """Regression: in an experiment of more than 1000 runs (the masked path) the two damages
    cancelled out in the word count and 10 records loaded with rank = N, time = 0, N = time.
    Interleaved or not, both lines are reported and every other record loads unchanged."""
    names = [("rowinit" if i % 2 else "colinit") for i in range(3000)]
    if not interleaved:
        names.sort(reverse=True)
    lines = [f"{name} 0 0 2.1300000000000001e-07 {i}" for i, name in enumerate(names)]
    trace = load(HEADER + "\n".join(damaged_pair(lines)) + "\n#end\n")
    assert messages(trace) == [
        f"t.dat:{FIRST_RECORD_LINE + 101}: record of 'rowinit' has a TAB at column 20 "
        "(values are separated by single spaces); it is ignored",
        f"t.dat:{FIRST_RECORD_LINE + 121}: record of 'rowinit' has a TAB at column 9 "
        "(values are separated by single spaces); it is ignored"]
    row = trace.experiments["rowinit"]
    expected = [i for i, name in enumerate(names) if name == "rowinit" and i not in (101, 121)]
    assert row.columns["N"].tolist() == expected
    assert set(row.columns["rank"]) == {0} and set(row.columns["time"]) == {2.1300000000000001e-07}
    assert len(trace.experiments["colinit"]) == 1500


@pytest.mark.parametrize("line, fault", [
    ("rowinit 0 0 1e-6 16 ", "a space at its end at column 20"),
    ("rowinit 0 0 1e-6  16", "two spaces in a row at column 17"),
    (" rowinit 0 0 1e-6 16", "a space at its start at column 1"),
    ("rowinit 0 0 1e-6 16\r", "a carriage return at column 20"),    # \r only in a \r\n file
    ("rowinit 0 0 1e-6 1\x0b6", "a vertical tab at column 19"),
])
def test_spacing_damage_is_reported_not_repaired(line, fault):
    """A value cut by a space, TAB or line end must not load as a shorter number (`16` as `1`)."""
    trace = load(HEADER + line + "\n#end\n")
    assert messages(trace) == [f"t.dat:{FIRST_RECORD_LINE}: record of 'rowinit' has {fault} "
                               "(values are separated by single spaces); it is ignored"]
    assert len(trace.experiments["rowinit"]) == 0


def test_value_cut_by_a_line_break_is_reported():
    trace = load(HEADER + "rowinit 0 0 1e-6 1\n\nrowinit 0 0 1e-6 32\n#end\n")
    assert messages(trace) == [f"t.dat:{FIRST_RECORD_LINE + 1}: blank line among the records: the trace may be "
                               "damaged (a value cut short by a line break)"]


def test_unknown_parallel_value_is_reported():
    """A damaged `parallel` would silently add a P column to every experiment."""
    trace = load(HEADER.replace("#procs: 1", "#procs: 1\n#parallel: no\tne") + "rowinit 0 0 1e-6 16\n#end\n")
    assert messages(trace) == ["t.dat:4: unknown 'parallel: no\tne' (not none, OpenMP, MPI, PUB)"]


def test_huge_garbage_is_refused_after_reading_a_bounded_prefix(tmp_path):
    """A 2 GB file of zeros (sparse: cheap to make) is refused from its first 64 KiB, and a
    trace line followed by gigabytes without #data from its first 16 MiB; the messages quote
    at most 40 characters of the first line, control characters escaped."""
    import resource
    zeros = tmp_path / "zeros.dat"
    with open(zeros, "wb") as f:
        f.truncate(2 << 30)
    with pytest.raises(TraceError) as err:
        read_trace(zeros)
    nul = "\\x00"
    assert str(err.value) == f"{str(zeros)!r} is not a CALL trace: its first line is '{nul * 10}...', not '#cll-trace 1'"
    headed = tmp_path / "headed.dat"
    with open(headed, "wb") as f:
        f.write(b"#cll-trace 1\n")
        f.truncate(2 << 30)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(TraceError, match=r"has no #data line in its first 16 MiB"):
        read_trace(headed)
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 200_000    # KiB: not 2 GB
