"""What a review of llac at the terminal found (session 31): a fit that crashed on large
values, a model file that attached itself to another experiment of the same name, and the
messages and completions a person at the prompt meets."""
import subprocess
import sys

from support.commands import llac
from support.traces import write_matinit


def test_a_fit_of_very_large_values_fits_without_internal_error_or_numpy_warnings(tmp_path):
    """`x = G with N = N * 1e200; fit x`: the cut between two sample values was their
    geometric mean, whose product overflowed (a cut at inf, an empty side: internal error), and
    numpy's RuntimeWarnings reached the user."""
    write_matinit(tmp_path / "m.cll.1.dat")
    for factor in ("1e150", "1e200", "1e300", "1e-150"):
        status, out, err = llac(tmp_path, f'load "m.cll.1.dat"; y = colinit formula "y[0] + y[1]*N*log(N)"; '
                                          f'x = y with N = N * {factor}; fit x; predict x')
        assert status == 0, err
        assert "internal error" not in err and "RuntimeWarning" not in err and "Warning:" not in err, err
        assert "model of x" in out
    status, out, err = llac(tmp_path, 'load "m.cll.1.dat"; x = colinit with N = N * 1e200; fit x')   # N*N: inf
    assert status == 1 and "cannot fit x: term colinit[1]*N*N is not finite at" in err, err


def test_a_model_file_of_other_data_does_not_take_the_name_of_the_experiment_loaded_here(tmp_path):
    """colinit's model exported, colinit deleted, rowinit renamed colinit, the model loaded:
    it became colinit.model, and `predict colinit` and `report` used the column-wise model for
    rowinit's data."""
    write_matinit(tmp_path / "m.cll.1.dat")
    status, out, err = llac(tmp_path, 'load "m.cll.1.dat"; fit colinit; export colinit.model "c.json"; '
                                      'delete colinit, colinit.model; rename rowinit colinit; load "c.json"; list')
    assert status == 0, err
    assert ("warning: the model in this file was not fitted on the experiment colinit loaded here (its formula "
            "is colinit[0]") in err, err
    assert "created colinit.model@c:" in out and out.count("created colinit.model:") == 1, out   # the fit's
    status, out, err = llac(tmp_path, 'load "m.cll.1.dat"; fit colinit; export colinit.model "c.json" replace; '
                                      'delete colinit.model; load "c.json"')
    assert status == 0 and "created colinit.model:" in out and "warning" not in err, out + err


def test_tab_after_machine_offers_every_subcommand():
    """`machine <TAB>` offered only export and import: list, show, compare, mountain and bsp are
    terminals of several keywords, which completion did not read."""
    from llac.completion import candidates
    from llac.session import Session
    assert set(candidates(Session(), "machine ")) == {"export", "import", "list", "show", "compare", "mountain", "bsp"}


def test_a_pasted_input_that_stops_at_an_error_says_what_was_not_run():
    """A script pasted at the prompt is one input: it stopped at its error on line 3 and left
    lines 4-6 out without a word; a syntax error anywhere leaves all of it out."""
    import io
    from llac.repl import run_statements
    from llac.session import Session
    said = {}
    for text in ("set threshold 0.1\nfit nosuch\nset alpha 0.1\n# a comment\nshow settings\n",
                 "set threshold 0.1\nfti x\nset alpha 0.1\n", "fit nosuch\n"):
        out, err = io.StringIO(), io.StringIO()
        run_statements(Session(), text, out, err)
        said[text] = err.getvalue().splitlines()[-1]
    assert list(said.values())[:2] == ["the rest of this input (lines 3-5) was not run",
                                       "nothing of this input was run: it is read whole before its first statement runs"]
    assert "run" not in list(said.values())[2], said       # one statement: nothing more to say


def test_what_a_person_types_wrong_at_the_prompt_gets_a_hint_at_its_cause():
    from llac.commands import keywords
    from llac.errors import LlacError
    from llac.parse import parse
    expected = {
        'load "x.dat': "(this string is not closed: its '\"' is missing)",
        "merge a, b": "expected '=', found 'a' (merge makes a new object: name it, NAME = merge ...)",
        "aggregate G": "(aggregate makes a new object: name it, NAME = aggregate ...)",
        "fit a && b": "unexpected '&': expected ';' or the end of the line (write and)",
        "x = G where N < 5 || N > 9": "(write or)",
        "größe = colinit": "(names are ASCII letters, digits and '_')",
        "copy G": "unknown command 'copy' (a copy is written NAME = OBJECT)",
        "G where N < 5": "G where ... makes a new object: name it, NAME = G where ...",
    }
    for text, message in expected.items():
        try:
            parse(text, keywords())
        except LlacError as error:
            assert message in error.message, (text, error.message)
        else:
            raise AssertionError(f"{text!r} parsed")


def test_a_terminal_too_narrow_for_a_plot_is_told_so(monkeypatch):
    """Below 42 columns the plot was drawn 40 wide, and every row wrapped into the next."""
    import os
    import pytest
    from llac.errors import LlacError
    from llac.plot import terminal_canvas

    class Terminal:
        def isatty(self):
            return True
    monkeypatch.setattr("shutil.get_terminal_size", lambda fallback: os.terminal_size((30, 24)))
    with pytest.raises(LlacError) as error:
        terminal_canvas(Terminal())
    assert error.value.message.startswith("the terminal is 30 columns wide, and a plot needs 42")
    monkeypatch.setattr("shutil.get_terminal_size", lambda fallback: os.terminal_size((42, 24)))
    assert terminal_canvas(Terminal()).width == 40


def test_describe_says_the_formula_once_and_the_traces_own_when_it_differs(tmp_path):
    write_matinit(tmp_path / "m.cll.1.dat")
    status, out, err = llac(tmp_path, 'load "m.cll.1.dat"; describe colinit; q = colinit formula "q[0] + q[1]*N"; '
                                      'describe q')
    assert status == 0, err
    first, second = out.split("q: sample points")[0].split("\ncolinit: sample points")
    assert first.count("formula: ") == 1, first
    assert "\nformula: q[0] + q[1]*N" in second and "\ntrace formula: colinit[0] + colinit[1]*N*N" in second, second


def test_a_setting_value_that_is_refused_is_pointed_at(tmp_path):
    """The caret was under the whole `set` statement."""
    status, out, err = llac(tmp_path, "set maxintervals 2.5")
    assert status == 1 and err.startswith("<command>:1:18: maxintervals takes a whole number from 1 to 100, "
                                          "not 2.5\n    set maxintervals 2.5\n                     ^^^\n"), err


def test_log_on_a_residual_plot_is_said_to_change_nothing(tmp_path):
    write_matinit(tmp_path / "m.cll.1.dat")
    status, out, err = llac(tmp_path, 'load "m.cll.1.dat"; plot colinit residuals log')
    assert status == 0 and "`log` changes nothing there" in out, out + err
    assert "changes nothing" not in llac(tmp_path, 'load "m.cll.1.dat"; plot colinit residuals loglog')[1]


def test_describes_noisy_mark_is_true_or_false_in_json(tmp_path):
    """Flags are true/false in JSON and CSV (docs/llac-language.md); describe's was "noisy" or ""."""
    import json
    write_matinit(tmp_path / "m.cll.1.dat")
    done = subprocess.run([sys.executable, "-m", "llac", "-c", 'load "m.cll.1.dat"; describe colinit', "--format",
                           "json"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    points = [json.loads(line) for line in done.stdout.splitlines()][-1]
    assert points["columns"][-1] == "noisy" and {type(r["noisy"]) for r in points["rows"]} == {bool}, points


def test_a_constant_held_at_zero_has_no_standard_error_in_csv(tmp_path):
    """Pruned or bounded constants printed `stderr` 0 in CSV and JSON; the text shows none."""
    import csv
    import io
    import numpy as np
    from support.traces import trace_text
    n = np.repeat([250.0, 400, 630, 1000, 1600, 1896], 3)        # no fixed cost: pairs[0] held at 0
    (tmp_path / "p.cll.1.dat").write_text(trace_text({"pairs": ("pairs[0] + pairs[1]*N*N", ["N"],
                                                                [(7.8e-10 * x * x, x) for x in n])}))
    done = subprocess.run([sys.executable, "-m", "llac", "-c", 'load "p.cll.1.dat"; fit pairs', "--format", "csv"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    rows = list(csv.DictReader(io.StringIO(done.stdout)))
    zero = [r for r in rows if float(r["value"]) == 0]
    assert zero and all(r["stderr"] == "" for r in zero), rows
    assert all(r["stderr"] != "" for r in rows if float(r["value"]) != 0), rows
