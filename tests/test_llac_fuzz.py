"""Property-based fuzzing of what users type into llac (issue 8: ~29,000 generated inputs found
tracebacks). Statements are drawn from the grammar's own vocabulary (commands, keywords, object
names that exist and that do not, columns, extreme numbers, strings, operators, half-finished
statements) and from random text and bytes; they run through a Session with a real small trace
loaded, and some through `python -m llac -c` as a user would. Whatever the input, the only
exception that may escape is LlacError, with a one-line message located in the source."""
import contextlib
import re
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from llac.commands import keywords
from llac.errors import LlacError, format_error
from llac.parse import grammar_keywords
from llac.render import render
from llac.session import Session
from support.supersteps import FIGURE1, write_pub_trace
from support.traces import write_matinit

EXISTING = ["colinit", "rowinit", "colinit.model", "m"]    # made by SETUP
OBJECTS = [*EXISTING, "nope", "colinit@x", "_", "log"]
SETUP = 'load "matinit.cll.1.dat", "fig1.cll.2.dat"; fit colinit; m = fit rowinit'

COLUMNS = ["N", "time", "rank", "thread", "P", "count"]
NUMBERS = ["0", "-0", "1", "3", "2.5", "-7", "1e400", "-1e400", "1e200", "1e-300", "1e308",
           "99999999999999999999999", "1e6", "inf", "-inf", "nan", ".5", "5%", "0.05"]
STRINGS = ['"matinit.cll.1.dat"', '"*.dat"', '"nope.dat"', '""', "'x.csv'", '"out.csv"', '"a\\b"']
OPERATORS = ["=", ",", ";", "+", "-", "*", "/", "^", "(", ")", "[", "]", "..", "<", "<=", "==",
             "!=", "and", "or", "not", "%", "\n", "\\\n", "#", "@", ".", "step", "*2"]
SETTINGS = ["threshold", "maxintervals", "minpoints", "alpha", "aggregate", "split", "prune",
            "seed", "bootstrap", "maxpieces", "median", "min", "mean", "on", "off"]
CONSTANTS = ["colinit[0]", "colinit[1]", "colinit[2]", "colinit[1e400]", "rowinit[-1]", "f[0]"]
MAX_TERMS = 40   # long formulas are another fix (RecursionError), not this fuzzer's subject

word = st.sampled_from(sorted({*keywords(), *grammar_keywords(), *OBJECTS, *COLUMNS, *NUMBERS,
                               *STRINGS, *OPERATORS, *SETTINGS, *CONSTANTS}))
expression = st.lists(st.sampled_from([*COLUMNS, *NUMBERS[:14], "log(N)", "sqrt(N)", "N^2"]),
                      min_size=1, max_size=MAX_TERMS).flatmap(
    lambda terms: st.lists(st.sampled_from(["+", "-", "*", "/", "^", "<", "and"]),
                           min_size=len(terms) - 1, max_size=len(terms) - 1).map(
        lambda ops: " ".join(t for pair in zip(terms, ops + [""]) for t in pair).strip()))


@st.composite
def statement(draw):
    """One statement in the shape of a command, with arguments drawn from the vocabulary."""
    names = st.sampled_from(EXISTING * 4 + OBJECTS)   # mostly objects that exist, to get deep
    obj, other = draw(names), draw(names)
    number = draw(st.sampled_from(NUMBERS))
    col = draw(st.sampled_from(COLUMNS))
    shapes = [
        f"fit {obj}", f"drop {obj} {draw(st.sampled_from(CONSTANTS))}", f"drop {obj}",
        f"show {obj} limit {number}", f"describe {obj}", f"list", f"set", f"help {obj}",
        f"set {draw(st.sampled_from(SETTINGS))} {draw(st.sampled_from(NUMBERS + SETTINGS))}",
        f"predict {obj} {col}={number}", f"predict {obj} N={number}..{draw(st.sampled_from(NUMBERS))} *2",
        f"predict {obj} N={number}..{draw(st.sampled_from(NUMBERS))} step {draw(st.sampled_from(NUMBERS))}",
        f"predict {obj} at {other}", f"predict {obj} at {other} by {col}", f"predict {obj}",
        f"plot {obj} {draw(st.sampled_from(['', 'log', 'loglog', 'residuals', 'vs N', 'by P', 'vs time loglog']))}",
        f"x = {obj} where {draw(expression)}", f"x = {obj} with {col} = {draw(expression)}",
        f"x = {obj} formula \"x[0] + x[1]*{draw(expression)}\"", f"x = merge {obj}, {other}",
        f"x = aggregate {obj} by {draw(st.sampled_from(SETTINGS))}", f"rename {obj} {other}",
        f"delete {obj}", f"balance {obj} by {col}", f"comm {obj}", f"plot balance {obj}",
        f"export {obj} {draw(st.sampled_from(STRINGS))}", f"load {draw(st.sampled_from(STRINGS))}",
        f"m = fit {obj}", f"x = {obj}",
        f"machine {draw(st.sampled_from(['list', 'show', 'compare', 'mountain', 'bsp']))} {obj} {other}",
        f"machine export {obj} {draw(st.sampled_from(STRINGS))}",
        f"machine import {draw(st.sampled_from(STRINGS))}",
        f"obsp {draw(st.sampled_from(['fig1', 'fig', obj]))}",
        f"obsp fig1 {draw(st.sampled_from(['', 'sum']))} {draw(st.sampled_from(['', f'on {obj}']))} "
        f"with g={number}, L={draw(st.sampled_from(NUMBERS))}",
        f"timeline {draw(st.sampled_from(['fig1', 'fig', obj]))} "
        f"{draw(st.sampled_from(['', 'model', 'sum', f'P={number}', f'run={number}', f'{col}={number}']))} "
        f"with g={number}, L={draw(st.sampled_from(NUMBERS))}"]
    return draw(st.sampled_from(shapes))


def token_soup():
    """Any sequence of the vocabulary's words: mostly syntax errors, some odd valid statements."""
    return st.lists(word, min_size=1, max_size=12).map(" ".join)


programs = st.one_of(
    statement(), statement(),
    st.lists(statement(), min_size=1, max_size=4).map("; ".join),
    st.lists(statement(), min_size=1, max_size=3).map(lambda s: "\n".join(s)[:-3]),   # cut short
    token_soup(),
    st.text(max_size=40),
    st.binary(max_size=40).map(lambda b: b.decode("latin-1")))


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    path = tmp_path_factory.mktemp("fuzz")
    write_matinit(path / "matinit.cll.1.dat")
    write_pub_trace(path / "fig1.cll.2.dat", FIGURE1)
    return path


def check_error(error: LlacError, source: str) -> None:
    """A user's error is one sentence, located at a line and column that exist in the source."""
    assert "\n" not in error.message and error.message.strip(), error.message
    assert error.span is not None, f"no location for {error.message!r}"
    lines = source.splitlines() or [""]
    assert 1 <= error.span.line <= len(lines) + 1 and error.span.column >= 1, error.span
    assert format_error(error, "<command>", source).startswith(f"<command>:{error.span.line}:")


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(source=programs)
def test_session_raises_nothing_but_located_llac_errors(workdir, source):
    with contextlib.chdir(workdir):
        session = Session()
        list(session.execute(SETUP))
        try:
            for result in session.execute(source):
                render(result)
        except LlacError as error:
            check_error(error, source)


@settings(max_examples=10, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                  HealthCheck.too_slow])
@given(source=st.one_of(st.lists(statement(), min_size=1, max_size=3).map("; ".join), token_soup()))
def test_llac_command_line_never_prints_a_traceback(workdir, source):
    done = subprocess.run([sys.executable, "-m", "llac", "-c", f"{SETUP}; {source}"],
                          cwd=workdir, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=120)
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr, done.stderr
    assert done.returncode in (0, 1), done.stderr
    if done.returncode == 1:
        assert re.search(r"^(<command>:\d+:\d+: |llac: )", done.stderr, re.M), done.stderr


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(source=st.one_of(programs, st.text(max_size=30)), anywhere=st.integers(min_value=0))
def test_completion_of_any_prefix_raises_nothing(workdir, source, anywhere):
    """Tab anywhere in anything typed (several statements and lines, comments, formula strings
    cut short) offers words (or nothing) and never fails."""
    from prompt_toolkit.completion import CompleteEvent
    from prompt_toolkit.document import Document
    from llac.repl import LlacCompleter
    session = Session()
    with contextlib.chdir(workdir):
        list(session.execute('load "matinit.cll.1.dat"'))
        completer = LlacCompleter(session)
        for cut in {len(source), len(source) // 2, anywhere % (len(source) + 1)}:
            words = [c.text for c in completer.get_completions(Document(source[:cut], cut), CompleteEvent())]
            assert all(isinstance(w, str) and w for w in words)
