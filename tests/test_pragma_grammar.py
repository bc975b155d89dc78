"""Unit tests of the pragma grammar and parser (call.pragmas) and of what each directive
generates (call.generate), without a compiler."""
import pytest

from call.check import check_file
from call.clex import Directive, lex
from call.diagnostics import CallError
from call.generate import instrumented_header, instrumented_source
from call.pragmas import Begin, End, EndFor, For, Parallel, Report, parse_pragma, procs_sequence
from support.generated import compiled_lines


def pragma(text):
    directive = next(d for d in lex(text) if isinstance(d, Directive))
    return parse_pragma(directive, "t.c")


def test_begin_with_sync_and_continuation_line():
    p = pragma("#pragma cll sync f f[0]+f[1]*log(P)+\\\n   f[2]*(N/P)*log(N/P)+f[3]*N*(P-1)/P")
    assert isinstance(p, Begin) and p.name == "f" and p.sync
    assert p.formula.variables == ("P", "N") and len(p.formula.terms) == 4
    assert (p.line, p.column, p.site) == (1, 1, "t.c:1:1")


def test_begin_records_struct_members():
    p = pragma("  #pragma cll g g[0] + g[1]*s.n*p->len")
    assert not p.sync and p.formula.variables == ("s.n", "p->len") and p.column == 3


@pytest.mark.parametrize("text, expected", [
    ("#pragma cll end f", End("t.c", 1, 1, name="f")),
    ("#pragma cll end for", EndFor("t.c", 1, 1)),
    ("#pragma cll for(N=f(1, (2)); N < 8; N *= 2)", For("t.c", 1, 1, header="N=f(1, (2)); N < 8; N *= 2")),
    ("#pragma cll for(;;)", For("t.c", 1, 1, header="; ; ")),
    ("#pragma cll for(N = 1; N < 8; N *= 2) shuffle", For("t.c", 1, 1, header="N = 1; N < 8; N *= 2",
                                                         shuffle=True)),
    ("#pragma cll report all", Report("t.c", 1, 1, names=None)),
    ("#pragma cll report a, b", Report("t.c", 1, 1, names=("a", "b"))),
    ("#pragma cll parallel OpenMP", Parallel("t.c", 1, 1, model="OpenMP", obj=None, procs=None)),
    ("#pragma cll parallel OpenMP procs = 1:32:2", Parallel("t.c", 1, 1, model="OpenMP", obj=None, procs=(1, 32, 2))),
])
def test_directives(text, expected):
    assert pragma(text) == expected


def test_shuffle_is_a_keyword_only_after_a_for_header():
    p = pragma("#pragma cll shuffle shuffle[0] + shuffle[1]*N")
    assert isinstance(p, Begin) and p.name == "shuffle" and p.formula.variables == ("N",)


def test_procs_sequence():
    assert procs_sequence((1, 32, 2)) == [1, 2, 4, 8, 16, 32]
    assert procs_sequence((3, 30, 3)) == [3, 9, 27]


def test_comment_inside_a_pragma_is_blanked():
    assert pragma("#pragma cll end /* the end */ f") == End("t.c", 1, 1, name="f")


def test_unknown_parallel_model_suggests():
    with pytest.raises(CallError) as err:
        pragma("#pragma cll parallel openmp")
    assert "did you mean 'OpenMP'?" in err.value.diagnostics[0].message


SEQUENTIAL = """int main(void) {
    int N = 3;
    #pragma cll sync f f[0] + f[1]*N + \\
                f[2]*P
    N++;
    #pragma cll end f
    #pragma cll e e[0]
    #pragma cll end e
    #pragma cll report f, e
    return 0;
}
"""


def test_generated_code_keeps_lines_and_uses_the_runtime_api():
    program = check_file("s.c", SEQUENTIAL)
    lines = instrumented_source(program, "s.cll.h").splitlines()
    assert lines[:2] == ['#include "s.cll.h"', '#line 1 "s.c"']
    body = compiled_lines(instrumented_source(program, "s.cll.h"))
    assert len(body) == len(SEQUENTIAL.splitlines())
    assert body[2] == "    { double cll_v[] = {(double)(N), (double)(cll_procs())}; cll_begin(&cll_exp_f, cll_v, CLL_HERE); }"
    assert body[3] == ""  # continuation line
    assert body[5] == '    cll_end(&cll_exp_f, "s.c:6:5", CLL_HERE);'
    assert body[6] == "    { cll_begin(&cll_exp_e, 0, CLL_HERE); }"
    assert body[8].endswith('{"f", "e"}; cll_report(cll_names, 2); }')
    header = instrumented_header(program)
    assert 'static cll_experiment cll_exp_f = {"f", "f[0] + f[1]*N + f[2]*P", "s.c:3:5", 2, cll_vars_f, -1, 0};' in header
    assert "static inline int cll_procs(void) { return 1; }" in header
    assert "omp" not in header and "cll_sync" not in "\n".join(body)  # sync is a no-op here


def test_openmp_header_and_sync():
    program = check_file("o.c", "#pragma cll parallel OpenMP procs = 1:4:2\n" + SEQUENTIAL)
    header = instrumented_header(program)
    assert "#include <omp.h>" in header and "#pragma omp barrier" in header
    assert "cll_set_procs(omp_get_max_threads(), 0);" in header
    assert "cll_set_thread_id_function(cll_omp_thread);" in header
    assert "omp_in_parallel() ? omp_get_num_threads() : omp_get_max_threads()" in header
    assert "{ cll_sync(); double cll_v[]" in instrumented_source(program, "o.cll.h")


def test_pragma_right_after_an_openmp_pragma_is_rejected():
    text = "int main(void) {\n    #pragma omp parallel\n    #pragma cll f f[0]\n    { }\n    #pragma cll end f\n}\n"
    with pytest.raises(CallError) as err:
        check_file("p.c", text)
    assert "p.c:3:5" in err.value.render() and "'#pragma omp'" in err.value.render()


def test_pragma_after_a_standalone_openmp_directive_is_fine():
    text = "int main(void) {\n    #pragma omp barrier\n    #pragma cll f f[0]\n    #pragma cll end f\n}\n"
    assert [type(p).__name__ for _, p in check_file("p.c", text).sites] == ["Begin", "End"]
