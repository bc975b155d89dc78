"""`#if` decided with C's arithmetic, as gcc decides it (call/cexpr.py): a review found
`#define V 0x0200` read as 1, `-7 / 2` as -4, `1u - 2 > 0` false, so that call kept the arm
gcc dropped (or dropped the one it kept) without a word. The differential test asks gcc
itself about random expressions; where call decides, it must agree."""
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from call.clex import CodeToken, lex
from call.conditions import kept

REPO = Path(__file__).resolve().parent.parent
GCC = shutil.which("gcc")
needs_gcc = pytest.mark.skipif(GCC is None, reason="gcc is not installed")


def gcc_keeps(expressions: list[str], defines: str = "") -> list[bool | None]:
    """For each expression, whether gcc keeps `#if EXPRESSION`'s arm; None where gcc reports
    an error on that line (a division by zero, a floating constant)."""
    source = defines + "".join(f"#if {e}\nyes{i}\n#else\nno{i}\n#endif\n" for i, e in enumerate(expressions))
    done = subprocess.run([GCC, "-E", "-P", "-x", "c", "-"], input=source, capture_output=True, text=True)
    failed = {int(n) for n in re.findall(r"<stdin>:(\d+):\d+: error", done.stderr)}
    first = defines.count("\n") + 1
    answers = []
    for i in range(len(expressions)):
        line = first + 5 * i
        answers.append(None if line in failed else f"yes{i}" in done.stdout.split())
    return answers


def call_keeps(expression: str, defines: str = "") -> bool | None:
    """Whether call keeps the arm (None: undecided, so it reads both)."""
    text = defines + f"#if {expression}\nyes\n#else\nno\n#endif\n"
    items, undecided = kept(lex(text), text.splitlines(), {})
    words = [t.text for t in items if isinstance(t, CodeToken)]
    return None if undecided else words == ["yes"]


REVIEWED = ["-7 / 2 == -3", "-1/2 == 0", "-7 % 3 == -1", "7 % -3 == 1", "(1 << 63) < 0",
            "0xFFFFFFFFFFFFFFFF == -1", "1u - 2 > 0", "~0u == 0xffffffffffffffff", "-1 < 0u",
            "0 && 1/0", "1 || 1/0", "1 ? 2 : 1/0", "(1 ? -1 : 0u) > 0", "010 == 8", "0x10 == 16",
            "'a' == 97", "'\\377' < 0", "9223372036854775807 + 1 < 0", "-9223372036854775807 - 1 < 0",
            "18446744073709551615 == -1", "1 + 2 * 3 == 7", "(1 | 2 ^ 3 & 4) == 3", "!0 + !5 == 1",
            "-(-9223372036854775807 - 1) < 0", "(-8 >> 1) == -4", "(0xffffffffffffffffu >> 63) == 1"]


@needs_gcc
def test_reviewed_expressions_are_decided_as_gcc_decides_them():
    expected = gcc_keeps(REVIEWED)
    decided = [call_keeps(e) for e in REVIEWED]
    assert None not in decided, [e for e, d in zip(REVIEWED, decided) if d is None]
    assert decided == expected, [(e, d) for e, d, x in zip(REVIEWED, decided, expected) if d != x]


MACROS = "#define API 0x0200\n#define NEG -1\n#define SUM 1+2\n#define BIG 18446744073709551615u\n"


@needs_gcc
@pytest.mark.parametrize("expression", ["API >= 0x0200", "API == 512", "NEG < 0", "NEG == -1",
                                        "SUM * 2 == 5", "BIG > 0", "BIG + 1 == 0", "-NEG == 1"])
def test_a_macros_value_is_its_replacement_text_not_its_truth(expression):
    """`#define API 0x0200` is 512 (it was read as 1: true), `NEG` -1, `SUM*2` 1+2*2."""
    assert call_keeps(expression, MACROS) is not None
    assert call_keeps(expression, MACROS) == gcc_keeps([expression], MACROS)[0]


@pytest.mark.parametrize("expression", ["1 / 0", "1.0", "08", "1 << 64", "UNKNOWN_MACRO == 1",
                                        "FUNC", "SELF", "EMPTY", "1 ? 2", "2 , 3"])
def test_what_gcc_refuses_or_call_cannot_know_is_undecided(expression):
    """Every arm counts there, as for a macro call does not know (the arm is checked)."""
    defines = "#define FUNC(x) x\n#define SELF SELF\n#define EMPTY\n"
    assert call_keeps(expression, defines) is None


LITERALS = st.sampled_from(["0", "1", "2", "3", "7", "-1", "63", "64", "255", "0x7fffffffffffffff",
                            "0xffffffffffffffff", "9223372036854775807", "1u", "2U", "3ul", "5LL",
                            "4ull", "010", "0777", "0x1F", "'a'", "'\\n'", "'\\377'", "0b101"])
OPERATORS = st.sampled_from(["+", "-", "*", "/", "%", "<<", ">>", "<", ">", "<=", ">=", "==",
                             "!=", "&", "|", "^", "&&", "||"])


def expressions():
    """Random #if expressions: literals under unary and binary operators, parenthesised or
    not (so that precedence counts), and conditionals."""
    def extend(inner):
        binary = st.tuples(inner, OPERATORS, inner, st.booleans()).map(
            lambda t: f"({t[0]} {t[1]} {t[2]})" if t[3] else f"{t[0]} {t[1]} {t[2]}")
        unary = st.tuples(st.sampled_from(["-", "~", "!", "+"]), inner).map(lambda t: f"{t[0]}({t[1]})")
        ternary = st.tuples(inner, inner, inner).map(lambda t: f"(({t[0]}) ? ({t[1]}) : ({t[2]}))")
        return binary | unary | ternary
    return st.recursive(LITERALS, extend, max_leaves=8)


@needs_gcc
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(expressions(), min_size=10, max_size=10))
def test_random_expressions_agree_with_gcc_wherever_call_decides(batch):
    """Where call decides an `#if`, gcc decides it the same way; where gcc reports an error,
    call does not decide. (Ten expressions per gcc run.)"""
    answers = gcc_keeps(batch)
    for expression, gcc in zip(batch, answers):
        ours = call_keeps(expression)
        if gcc is None:
            assert ours is None, expression
        elif ours is not None:
            assert ours == gcc, expression


HEXVER = """#include <stdio.h>
#define API_VERSION 0x0200
int main(void) {
    int x = 0;
#if API_VERSION >= 0x0200
    #pragma cll A A[0]
    x += 1; puts("new API");
#else
    #pragma cll A A[0]
    x += 2; puts("old API");
#endif
    #pragma cll end A
    puts("done");
    return x == 1 ? 0 : 1;
}
"""


@needs_gcc
def test_the_reviewers_program_builds_and_runs_as_the_plain_program(tmp_path):
    """The review's hexver.c: call dropped the arm gcc keeps and the run stopped at `end A`
    with status 70 ("no experiment is open"), losing the program's own output."""
    (tmp_path / "hexver.c").write_text(HEXVER)
    env = dict(os.environ, PYTHONPATH=str(REPO))
    build = subprocess.run([sys.executable, "-m", "call", "cc", "hexver.c", "-o", "hexver"], cwd=tmp_path,
                           env=env, capture_output=True, text=True)
    assert build.returncode == 0, build.stderr
    run = subprocess.run(["./hexver"], cwd=tmp_path, capture_output=True, text=True)
    assert (run.returncode, run.stdout) == (0, "new API\ndone\n"), run.stderr


def test_a_digraph_if_is_decided_as_the_directive_is():
    """`%:if` is `#if` to gcc (and `%:define` a `#define`)."""
    assert call_keeps("V == 16", "%:define V 0x10\n") is True
    text = "%:if 0\nno\n%:else\nyes\n%:endif\n"
    items, undecided = kept(lex(text), text.splitlines(), {})
    assert [t.text for t in items if isinstance(t, CodeToken)] == ["yes"] and not undecided


@pytest.mark.parametrize("expression", ["defined(X) && X > 200000", "defined(X) && X == 0", "!defined(X)",
                                        "defined(_OPENMP) && _OPENMP >= 201307"])
def test_a_macro_call_does_not_know_is_undecided_in_a_value_not_only_in_defined(expression):
    """Review 42: an unknown X was tried as defined *to 1* and as undefined; both made
    `defined(X) && X > 200000` false, so call dropped an arm gcc keeps (-DX=300000, or
    `_OPENMP` under -fopenmp) and its pragmas were never translated: a trace without records."""
    assert call_keeps(expression) is None


def test_defined_alone_still_decides_where_every_choice_agrees():
    assert call_keeps("defined(X) && 0") is False and call_keeps("defined(X) || 1") is True
