"""The formula model: canonical-form validation with columns, variables, design matrices."""
import re
import numpy as np
import pytest

from cll_grammar.formula import FormulaError, evaluate, parse_formula, variables_of
from llac.parse import parse


def condition(text):
    """A condition as llac's `where` builds it from formula.lark's rules."""
    return parse(f"x = e where {text}")[0].source.condition


def expression(text):
    """An expression as llac's `with` builds it from formula.lark's rules."""
    return parse(f"x = e with t = {text}")[0].source.definitions[0][1]

FFT_MPI = "f[0]+f[1]*log(P)+f[2]*(N/P)*log(N/P)+f[3]*N*(P-1)/P"


def test_canonical_formula_terms_variables_and_constants():
    f = parse_formula(FFT_MPI, experiment="f")
    assert f.name == "f"
    assert f.constants == ("f[0]", "f[1]", "f[2]", "f[3]")
    assert set(f.variables) == {"N", "P"}
    assert str(f) == "f[0] + f[1]*log(P) + f[2]*N/P*log(N/P) + f[3]*N*(P - 1)/P"


def test_design_matrix_uses_real_arithmetic():
    f = parse_formula(FFT_MPI)
    X = f.design_matrix({"N": np.array([1024.0, 1024.0]), "P": np.array([1.0, 3.0])})
    n_p = 1024 / 3  # real division: C's integer 1024/3 would give 341
    assert X.shape == (2, 4)
    np.testing.assert_allclose(X[1], [1, np.log(3), n_p * np.log(n_p), 1024 * 2 / 3])
    np.testing.assert_allclose(X[0, 1], 0.0)


def test_evaluate_with_constants_matches_hand_computation():
    f = parse_formula("A[0] + A[1]*N + A[2]*N*N")
    y = f.evaluate([1.0, 2.0, 3.0], {"N": np.array([0.0, 1.0, 10.0])})
    np.testing.assert_allclose(y, [1.0, 6.0, 321.0])


def test_terms_may_come_in_any_order_and_subtract():
    f = parse_formula("g[1]*N - g[0]")
    assert f.constants == ("g[0]", "g[1]")
    np.testing.assert_allclose(f.evaluate([2.0, 3.0], {"N": np.array([10.0])}), [28.0])


@pytest.mark.parametrize("text, variables", [
    ("h[0] + h[1]*s.n", ("s.n",)),
    ("h[0]*p->len^2", ("p->len",)),
    ("h[0] + h[1]*min(N, M)*sqrt(K)", ("N", "M", "K")),
])
def test_struct_members_and_functions(text, variables):
    assert parse_formula(text).variables == variables


@pytest.mark.parametrize("text, column, words", [
    ("f[0]*f[1]*N", 6, "2 constants"),
    ("N + f[0]", 1, "has no constant"),
    ("f[0] + f[2]*N", 8, "f[1] is missing"),
    ("N*N", 1, "has no constant"),
    ("log(f[0])*N", 5, "inside log"),
    ("N/f[0]", 3, "denominator"),
    ("f[0] + f[1]*", 13, "ends too early"),
    ("f[0] + f[1]*foo(N)", 13, "unknown function 'foo'"),
    ("f[0] + f[1]*log(N, 2)", 13, "takes 1 argument"),
    ("f[0] + f[0]*N", 8, "appears in two terms"),
])
def test_non_canonical_formulas_name_the_column(text, column, words):
    with pytest.raises(FormulaError) as err:
        parse_formula(text, experiment="f")
    assert err.value.column == column
    assert words in err.value.message


def test_constant_of_another_experiment_is_rejected():
    with pytest.raises(FormulaError, match="does not belong to experiment 'f'") as err:
        parse_formula("f[0] + g[1]*N", experiment="f")
    assert err.value.column == 8


def test_without_drops_terms_and_keeps_names():
    f = parse_formula("f[0] + f[1]*N + f[2]*N*N").without([0])
    assert f.constants == ("f[1]", "f[2]")
    assert f.variables == ("N",)
    with pytest.raises(FormulaError):
        f.without([1, 2])


def test_conditions_and_expressions_over_columns():
    cols = {"N": np.array([256.0, 512.0, 1024.0]), "rank": np.array([0.0, 1.0, 0.0])}
    mask = evaluate(condition("N <= 512 and rank == 0 or not (N < 1000)"), cols)
    assert mask.tolist() == [True, False, True]
    np.testing.assert_allclose(evaluate(expression("N * 1e-3 + 2^3"), cols), [8.256, 8.512, 9.024])
    assert variables_of(condition("a.b > c and d->e != 1")) == ("a.b", "c", "d->e")


def test_unknown_column_is_named():
    with pytest.raises(KeyError, match="M"):
        evaluate(expression("N + M"), {"N": np.array([1.0])})


@pytest.mark.parametrize("statement, column, words", [
    ("x = e where foo(N) > 1", 13, "unknown function 'foo'"),
    ("x = e with t = log(N, 2)", 16, "log() takes 1 argument, got 2"),
])
def test_llac_expressions_check_functions_where_they_stand(statement, column, words):
    """The check lives in the shared ExpressionBuilder, so llac's grammar gets it too."""
    from llac.errors import LlacError
    with pytest.raises(LlacError) as err:
        parse(statement)
    assert words in str(err.value) and err.value.span.column == column


@pytest.mark.parametrize("text, printed", [
    ("f[0]*N/P*M - f[1]/N", "f[0]*N/P*M - f[1]*1/N"),
    ("N*f[0]*1*M + f[1]*(N - (P + 1))", "f[0]*N*M + f[1]*(N - (P + 1))"),
    ("f[0] - (f[1]*N - f[2]*log(N))", "f[0] - f[1]*N + f[2]*log(N)"),
    ("f[0]*N/(P*M)", "f[0]*N/(P*M)"),
])
def test_flat_chains_print_and_sign_terms_as_written(text, printed):
    assert str(parse_formula(text)) == printed


def test_formula_of_thousands_of_terms_is_a_shallow_tree():
    terms = 3000
    f = parse_formula(" + ".join(f"f[{i}]*N^({i}/1000)" for i in range(terms)))
    assert len(f.terms) == terms and f.variables == ("N",)
    assert parse_formula(str(f)) == f
    np.testing.assert_allclose(f.evaluate(np.ones(terms), {"N": np.array([2.0])}),
                               [np.sum(2.0 ** (np.arange(terms) / 1000))])
    assert str(condition(" or ".join(["N > 1"] * terms))).count(" or ") == terms - 1
    assert evaluate(expression(" - ".join(["N"] * terms)), {"N": np.array([1.0])}) == 2 - terms


def test_nesting_beyond_the_recursion_limit_is_a_formula_error():
    with pytest.raises(FormulaError, match="nests too deeply"):
        parse_formula("f[0]*" + "2^" * 3000 + "N")


@pytest.mark.parametrize("text", [
    "f[0] + f[1]*N^6 + f[2]*N^7",                       # scaled by the largest probe, N^6's others were 0
    "f[0] + f[1]*N^20 + f[2]*N^21",
    "f[0] + f[1]*N^5 + f[2]*N^5*log(N)",
    "k[0] + k[1]*a + k[2]*b + k[3]*c + k[4]*d + k[5]*e + k[6]*f + k[7]*g + k[8]*h + k[9]*i",   # 9th = 1st
    "k[0] + k[1]*a*b*c*d*e*f*g*h + k[2]*i",             # the product of 8 probes' lists was a constant
])
def test_terms_that_differ_are_not_called_the_same_up_to_a_factor(text):
    """A review: these valid formulas were refused as terms that cost the same up to a factor."""
    assert len(parse_formula(text).terms) == text.count("[")


@pytest.mark.parametrize("text, pair", [
    ("f[0] + f[1]*N^20 + f[2]*3*N^20", "f[1]*N^20 and f[2]*3*N^20"),
    ("f[0] + f[1]*log(N) + f[2]*log(N^2)", "f[1]*log(N) and f[2]*log(N^2)"),
    ("f[0] + f[1]*a*b*c*d*e*f*g*h*i + f[2]*i*h*g*f*e*d*c*b*a", "f[1]*a*b*c*d*e*f*g*h*i and f[2]*i*h*g*f*e*d*c*b*a"),
])
def test_terms_that_are_proportional_at_any_scale_are_refused(text, pair):
    with pytest.raises(FormulaError, match=re.escape(f"terms {pair} cost the same up to a factor")):
        parse_formula(text)
