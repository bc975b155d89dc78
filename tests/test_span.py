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


def test_one_suggester_for_both_tools():
    assert suggest("NN", ["N", "P", "time"]) == " (did you mean 'N'?)"
    assert suggest("zzz", ["N", "P"]) == ""
    assert nearest("xyz", ["MPI", "PUB"], cutoff=0) in ("MPI", "PUB")
