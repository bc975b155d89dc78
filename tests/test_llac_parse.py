"""The llac command language: statements, continuation lines, and syntax errors in plain words."""
import pytest

from cll_grammar.formula import Chain
from llac import ast
from llac.commands import keywords
from llac.errors import LlacError, format_error
from llac.parse import incomplete, parse


def error_of(text) -> LlacError:
    with pytest.raises(LlacError) as info:
        parse(text, keywords())
    return info.value


def test_statements_separated_by_newlines_and_semicolons_with_comments():
    statements = parse('# start\nload "a.dat"; list  # all\n\nfit colinit\n', keywords())
    assert [type(s) for s in statements] == [ast.Load, ast.List, ast.Fit]
    assert statements[2].span.line == 4


def test_assignment_builds_source_with_expression_nodes():
    (s,) = parse("small = colinit where N <= 512 and rank == 0", keywords())
    assert isinstance(s, ast.Assign) and s.target.text == "small"
    assert isinstance(s.source, ast.Where) and isinstance(s.source.condition, Chain)
    assert str(s.source.condition) == "N <= 512 and rank == 0"


def test_continuation_after_operator_comma_parenthesis_and_backslash():
    text = "x = c where N <= 512 and\n  rank == 0\ny = c with t = (time *\n 2), u = N\nset \\\n threshold 5%\n"
    statements = parse(text, keywords())
    assert [type(s) for s in statements] == [ast.Assign, ast.Assign, ast.Set]
    assert statements[2].value == "5%"


def test_continuation_after_power_and_range():
    (power, predict) = parse("y = c with t = N **\n 2\npredict f N=1024..\n8192 *2", keywords())
    assert str(power.source.definitions[0][1]) == "N^2"
    assert predict.points[0].values == (1024, 2048, 4096, 8192)


def test_parser_token_names_are_the_grammar_terminals():
    """The terminal names llac.parse relies on exist in the grammar (none is Lark's `__ANON_n`)."""
    from cll_grammar.grammars import open_grammar
    from llac.parse import CONTINUE_AFTER, OPERATORS, POSTLEX, WORDS
    terminals = {t.name for t in open_grammar("llac.lark", postlex=POSTLEX).terminals}
    named = (CONTINUE_AFTER | OPERATORS | set(WORDS)) - {"_NL", "$END"}
    assert named <= terminals and not any(t.startswith("__ANON") for t in terminals)


def test_predict_values_lists_and_ranges():
    (s,) = parse("predict f N=1024..8192 *2 P=1,2,4 M=10..30 step 10 Q=5", keywords())
    assert [p.values for p in s.points] == [(1024, 2048, 4096, 8192), (1, 2, 4), (10, 20, 30), (5,)]
    assert "factor F > 1" in error_of("predict f N=1..8 *1").message
    assert "empty" in error_of("predict f N=8..1 step 1").message


def test_plot_options_and_load_options():
    (p,) = parse("plot f vs N by P loglog residuals", keywords())
    assert (p.vs.text, p.by.text, p.scale, p.residuals) == ("N", "P", "loglog", True)
    (load,) = parse('load "d.csv" as d formula "d[0] + d[1]*N"', keywords())
    assert load.name.text == "d" and load.formula == "d[0] + d[1]*N" and load.formula_span.column == 27


def test_unknown_command_suggests_nearest():
    err = error_of("list\n  fitt colinit")
    assert err.message.startswith("unknown command 'fitt' (did you mean 'fit'?)")
    assert (err.span.line, err.span.column) == (2, 3)


def test_a_near_miss_of_a_keyword_expected_there_is_suggested():
    err = error_of("machine shwo")
    assert err.message.endswith("found 'shwo' (did you mean 'show'?)")
    assert (err.span.line, err.span.column) == (1, 9)
    assert "did you mean" not in error_of("machine zzz").message
    assert error_of("timeline f modle").message.endswith("found 'modle' (did you mean 'model'?)")
    assert "did you mean" not in error_of("timeline f P").message


def test_expected_words_are_plain():
    assert error_of("show").message == "expected a name, found the end of the line"
    assert "expected a number, a column name or '('" in error_of("x = c where N <").message
    err = error_of("x = c where N <= 3 junk")
    assert "an operator" in err.message and "found 'junk'" in err.message


def test_error_format_has_location_line_and_caret():
    err = error_of("list\nshow 12")
    text = format_error(err, "s.llac", "list\nshow 12")
    assert text.splitlines() == ["s.llac:2:6: expected a name, found '12'",
                                 "    show 12", "         ^^"]


def test_incomplete_statements_wait_for_more():
    assert incomplete("x = c where N <")
    assert incomplete("y = c with t = (time")
    assert incomplete("set \\")
    assert not incomplete("fit x")
    assert not incomplete("fitt x y")


def test_a_terminal_of_several_words_lists_them_among_the_others():
    message = error_of("machine").message        # 'export', 'import' and the views of MACHINE_VIEW
    assert message.startswith("expected 'export', 'import', 'list', 'show', 'compare', 'mountain' or 'bsp'")


def test_a_syntax_error_offers_only_what_the_parser_accepts_there():
    """A review: `set threshold;` said "expected a name, a number or the end of the line",
    and `set threshold` then refused the end of the line."""
    for text in ("set threshold;", "set threshold"):
        assert error_of(text).message.startswith("expected a name or a number, found "), text
    assert error_of("show;").message == "expected a name, found ';'"     # not "unknown command 'show;'"


def test_syntax_errors_never_show_the_grammars_internal_names():
    """`where N = 5` read 'formula__member_op' among the expected words; now plain words,
    and the hint that a comparison is written ==."""
    single = error_of("s = f where N = 5").message
    assert "formula__" not in single and "'.', '->'" in single
    assert single.startswith("expected an operator") and single.endswith("(a comparison is written ==)")
    assert "==" not in error_of("s = f where N 5").message
