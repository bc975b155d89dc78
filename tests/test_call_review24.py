"""Review 24 of `call`, driven as a user runs it: a divisor that simplifies to 0, misspelt
commands and options, empty file names, and one message (with a hint) for a malformed
`for`, report names without commas and an experiment without a formula."""
import pytest

from test_call_diagnostics import call, check, in_main


def errors(err):
    """The error and warning lines of call's stderr (not the source lines and carets)."""
    return [line for line in err.splitlines() if ": error: " in line or ": warning: " in line]


@pytest.mark.parametrize("divisor, shown", [
    ("(N-N)", "N - N"), ("(2*N-N-N)", "2*N - N - N"), ("(0*N)", "0*N"),
    ("((N+1)^2 - N^2 - 2*N - 1)", "(N + 1)^2 - N^2 - 2*N - 1"),
    ("(log(N) - log(N))", "log(N) - log(N)"), ("(N/N - 1)", "N/N - 1"),
])
def test_a_divisor_that_simplifies_to_zero_is_an_error_at_its_column(tmp_path, divisor, shown):
    status, _, err = check(tmp_path, in_main(f"#pragma cll f f[0] + f[1]*N/{divisor}", "#pragma cll end f"))
    assert status == 1
    assert errors(err) == [f"prog.c:3:34: error: formula of "
                           f"experiment 'f': division by zero: the divisor {shown} is 0 whatever the variables"]


@pytest.mark.parametrize("divisor", ["(N-M)", "(N^2 - N*N + 1)", "(N/N)", "(sqrt(N) - N^0.5 + 1)",
                                     "((N+M+1)^64)"])
def test_a_divisor_that_is_not_always_zero_is_fine(tmp_path, divisor):
    status, _, err = check(tmp_path, in_main("int M = 3;", f"#pragma cll f f[0] + f[1]*N/{divisor}",
                                             "#pragma cll end f"))
    assert (status, err) == (0, "")


def test_a_formula_nested_too_deeply_to_check_is_one_message(tmp_path):
    status, _, err = check(tmp_path, in_main("#pragma cll f f[0] + f[1]/(" + "-" * 400 + "(2-2))",
                                             "#pragma cll end f"))
    assert status == 1 and "internal error" not in err
    assert errors(err) == ["prog.c:3:433: error: formula of experiment 'f': the expression nests too deeply "
                           "(signs, powers or 'not' a thousand levels deep)"]


def test_a_misspelt_command_gets_a_suggestion(tmp_path):
    status, _, err = call("prob", cwd=tmp_path)
    assert (status, err.splitlines()[-1]) == (1, "call: error: unknown command 'prob' (did you mean "
                                                 "'probe'?): the commands are translate, check, run, cc, probe")


def test_an_unknown_option_gets_its_commands_usage_and_a_suggestion(tmp_path):
    status, _, err = call("probe", "--quik", cwd=tmp_path)
    assert status == 1
    assert err.startswith("usage: call probe ")
    assert err.splitlines()[-1] == "call probe: error: unrecognized arguments: --quik (did you mean '--quick'?)"
    (tmp_path / "prog.c").write_text(in_main())
    status, _, err = call("translate", "prog.c", "other.c", cwd=tmp_path)
    assert (status, err.splitlines()[-1]) == (1, "call translate: error: unrecognized arguments: other.c")
    assert not (tmp_path / "prog.cll.c").exists()


def test_the_usage_lists_every_probe_option(tmp_path):
    status, out, _ = call("--help", cwd=tmp_path)
    assert status == 0
    assert ("call probe [--quick] [--label NAME] [--db PATH] [--largest SIZE] [--procs 1,2,4]\n"
            "           [--no-oversubscribe]\n") in out


@pytest.mark.parametrize("args, message", [
    (["check", ""], "call check: error: argument sources: the file name is empty"),
    (["run", ""], "call run: error: argument source: the file name is empty"),
    (["translate", "prog.c", "-o", ""], "call translate: error: argument -o: the folder name is empty"),
    (["probe", "--quick", "--db", ""], "call probe: error: argument --db: the file name is empty"),
])
def test_an_empty_file_name_is_said_to_be_empty(tmp_path, args, message):
    (tmp_path / "prog.c").write_text(in_main())
    status, _, err = call(*args, cwd=tmp_path)
    assert (status, err.splitlines()[-1]) == (1, message)
    assert not (tmp_path / "prog.cll.c").exists()


@pytest.mark.parametrize("begin, end, message", [
    ("for(N = 1; N < 10; N++", "end for", "3:39: error: this '#pragma cll' line ends too early"),
    ("fro(N = 1; N < 10; N++)", "end for", "3:17: error: unknown directive 'fro' after '#pragma cll' "
                                           "(did you mean 'for'?)"),
    ("fork fork[0] +", "end fork", "3:17: error: unknown directive 'fork' after '#pragma cll' "
                                   "(did you mean 'for'?)"),      # an experiment's name: no loop opens
])
def test_a_malformed_for_is_the_only_error(tmp_path, begin, end, message):
    """A malformed `for` still opens its loop, so its `end for` is no second error."""
    status, _, err = check(tmp_path, in_main(f"#pragma cll {begin}", "x += N;", f"#pragma cll {end}"))
    assert status == 1
    assert errors(err) == [f"prog.c:{message}"]


def test_report_names_without_a_comma_hint_at_the_comma(tmp_path):
    status, _, err = check(tmp_path, in_main("#pragma cll f f[0]", "x++;", "#pragma cll end f",
                                             "#pragma cll g g[0]", "x++;", "#pragma cll end g",
                                             "#pragma cll report f g"))
    assert status == 1
    assert errors(err) == ["prog.c:9:26: error: unexpected 'g' in '#pragma cll' line (separate "
                           "experiment names with commas)"]


@pytest.mark.parametrize("begin, column", [("#pragma cll f", 18), ("#pragma cll sync f", 23)])
def test_an_experiment_without_a_formula_is_told_it_needs_one(tmp_path, begin, column):
    status, _, err = check(tmp_path, in_main(begin, "x++;", "#pragma cll end f"))
    assert status == 1
    assert errors(err) == [f"prog.c:3:{column}: error: experiment 'f' needs a complexity formula after "
                           f"its name, such as 'f[0] + f[1]*N'"]
