"""Positions in the shared core: one Span, one caret renderer, one suggester, and expression
nodes that know their line (a statement continued over lines points at the right one)."""
import os
import subprocess
import sys
from pathlib import Path

from cll_grammar.formula import Variable, parse_formula, walk
from cll_grammar.span import Span, excerpt, nearest, suggest
from support.traces import write_matinit

REPO = Path(__file__).resolve().parent.parent


def test_unknown_column_on_the_second_line_of_a_statement_points_there(tmp_path):
    write_matinit(tmp_path / "matinit.cll.1.dat")
    source = 'load "matinit.cll.1.dat"; small = colinit where N > 2 and\n    NN < 3'
    result = subprocess.run([sys.executable, "-m", "llac", "-c", source], cwd=tmp_path,
                            env={**os.environ, "PYTHONPATH": str(REPO)}, text=True,
                            capture_output=True, stdin=subprocess.DEVNULL, timeout=120)
    assert result.returncode == 1
    lines = result.stderr.splitlines()
    assert lines[0].startswith("<command>:2:5: colinit has no column 'NN' (did you mean 'N'?)")
    assert lines[1:3] == ["        NN < 3", "        ^^"]


def test_expression_nodes_carry_their_span():
    formula = parse_formula("f[0] + f[1]*node.count")
    variable = next(n for n in walk(formula.terms[1].factor) if isinstance(n, Variable))
    assert variable.span == Span(1, 13, 1, 23)


def test_caret_lines_up_after_tabs_and_stops_at_the_end_of_the_line():
    assert excerpt("\tx = yy\n", Span.point(1, 6, 2)) == "\tx = yy\n\t    ^^"
    assert excerpt("ab", Span(1, 2, 1, 9), indent="  ") == "  ab\n   ^"
    assert excerpt("ab", Span(1, 1, 2, 3)) == "ab\n^"


def test_control_characters_in_a_quoted_line_are_escaped_and_the_caret_follows():
    assert excerpt("a\x1b[2Jb = c", Span.point(1, 7, 3)) == "a\\x1b[2Jb = c\n" + " " * 9 + "^^^"
    assert excerpt("\x07xy", Span.point(1, 1, 3)) == "\\x07xy\n^^^^^^"


def test_call_and_llac_never_echo_a_source_lines_escape_sequence(tmp_path):
    """A pragma or statement error on a line holding ESC (a terminal control sequence) shows
    it escaped: the file cannot clear or recolour the user's terminal."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    (tmp_path / "p.c").write_text("int main(void) {\n#pragma cll e e[0] + e[1]*N /* \x1b[2J */ +\n"
                                  "return 0; }\n")
    called = subprocess.run([sys.executable, "-m", "call", "check", "p.c"], cwd=tmp_path, env=env,
                            text=True, capture_output=True, timeout=120)
    script = tmp_path / "s.llac"
    script.write_text("set seed \x1b[31m\n")
    analysed = subprocess.run([sys.executable, "-m", "llac", str(script)], cwd=tmp_path, env=env,
                              text=True, capture_output=True, stdin=subprocess.DEVNULL, timeout=120)
    for done in (called, analysed):
        assert done.returncode == 1 and "\\x1b[" in done.stderr and "\x1b" not in done.stderr, done.stderr


def test_one_suggester_for_both_tools():
    assert suggest("NN", ["N", "P", "time"]) == " (did you mean 'N'?)"
    assert suggest("zzz", ["N", "P"]) == ""
    assert nearest("xyz", ["MPI", "PUB"], cutoff=0) in ("MPI", "PUB")


def test_a_long_line_is_cut_around_the_span_with_the_carets_still_under_it():
    line = "a" * 300 + "XYZ" + "b" * 300
    shown, carets = excerpt(line, Span.point(1, 301, 3)).split("\n")
    assert shown.startswith("...") and shown.endswith("...") and len(shown) == 3 + 120 + 3
    assert shown[carets.index("^"):carets.index("^") + 3] == "XYZ" and carets.strip() == "^^^"
    start, _ = excerpt("x" * 200, Span.point(1, 1)).split("\n")
    assert start.startswith("xxx") and start.endswith("...")
    end, caret = excerpt("x" * 199 + "!", Span.point(1, 200)).split("\n")
    assert end.startswith("...") and end.endswith("!") and len(caret) == len(end)
