"""Tab completion where a user at the prompt met nothing or the wrong words: the columns after
`with`, a formula string's variables and functions, a model's constants after `drop NAME`,
nothing in a comment, and the word being typed completed (llac.completion, llac.repl)."""
import io
import threading
import time

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.document import Document
from prompt_toolkit.history import InMemoryHistory
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput

from llac import repl
from llac.completion import candidates
from llac.session import Session
from support.supersteps import FIGURE1, write_pub_trace
from support.traces import trace_text, write_matinit

FUNCTIONS = ["log(", "log2(", "log10(", "sqrt(", "exp(", "floor(", "ceil(", "abs(", "pow(", "min(", "max("]


@pytest.fixture
def session(tmp_path, monkeypatch):
    """colinit and rowinit (N), colinit's model, and f, an experiment over N and P."""
    monkeypatch.chdir(tmp_path)
    write_matinit(tmp_path / "m.cll.1.dat")
    records = [(1e-6 * n / p, n, p) for n in (64, 128, 256, 512) for p in (1, 2, 4)]
    (tmp_path / "f.cll.4.dat").write_text(trace_text({"f": ("f[0] + f[1]*N/P", ("N", "P"), records)},
                                                     program="f", procs=4))
    session = Session()
    list(session.execute('load "m.cll.1.dat", "f.cll.4.dat"; fit colinit'))
    return session


def offered(session, text):
    """What the REPL's completer offers with the cursor after `text`."""
    return [c.text for c in repl.LlacCompleter(session).get_completions(Document(text, len(text)), CompleteEvent())]


# ---------------------------------------------------------------- 1. after `with`
def test_with_offers_the_columns_a_definition_may_name(session):
    assert candidates(session, "x = colinit with ") == ["rank=", "thread=", "time=", "N="]
    assert candidates(session, "x = f with y = N / P, ") == ["rank=", "thread=", "time=", "N=", "P="]
    assert candidates(session, "x = colinit with ti") == ["time="]
    assert candidates(session, "predict colinit N=4 with ") == ["g=", "L="]   # a what-if's parameters


def test_timeline_after_its_what_if_offers_run_selectors_not_parameters(tmp_path, monkeypatch):
    write_pub_trace(tmp_path / "fig1.cll.2.dat", FIGURE1)
    monkeypatch.chdir(tmp_path)
    session = Session()
    list(session.execute('load "fig1.cll.2.dat"'))
    assert candidates(session, "timeline fig1 with g=1e-9 ") == ["model", "P=", "run=", "on", "sum", "to"]
    assert candidates(session, "timeline fig1 with g=1e-9, ") == ["L=", "o="]


# ---------------------------------------------------------------- 2. inside a formula string
def test_a_formula_string_offers_the_variables_and_functions(session):
    assert candidates(session, 'g = f formula "f[0] + f[1]*') == ["N", "P", *FUNCTIONS]
    assert candidates(session, 'g = colinit formula "') == ["N", *FUNCTIONS]   # not time, rank, thread
    assert candidates(session, 'g = f formula "f[0] + f[1]*N/P*lo') == ["log(", "log2(", "log10("]
    assert candidates(session, 'g = f formula "f[0] + f[1]*sqrt(N') == []   # a name is being typed
    assert candidates(session, 'g = f formula "f[0] + f[1]*N ') == []       # an operator comes next
    assert candidates(session, 'load "f.csv" formula "f[0] + f[1]*') == FUNCTIONS   # its columns are unknown
    assert candidates(session, 'g = f formula "f[0] + ) ') == ["N", "P", *FUNCTIONS]   # does not parse
    assert candidates(session, 'load "m.cll') is None                     # a file name: the caller's paths


def test_expressions_offer_the_functions_too(session):
    assert candidates(session, "x = colinit where lo") == ["log(", "log2(", "log10("]
    assert candidates(session, "x = f with y = ") == ["rank", "thread", "time", "N", "P", *FUNCTIONS]


# ---------------------------------------------------------------- 3. names that exist, and new ones
def test_drop_offers_the_objects_then_the_constants(session):
    assert candidates(session, "drop ") == ["colinit", "rowinit", "f", "colinit.model"]
    assert candidates(session, "drop colinit.model ") == ["colinit[0]", "colinit[1]"]
    assert candidates(session, "m = drop f ") == ["f[0]", "f[1]"]
    assert candidates(session, "drop colinit colinit[0], ") == ["colinit[1]"]
    assert candidates(session, "drop colinit.model colinit[") == ["colinit[0]", "colinit[1]"]


def test_a_new_name_is_not_offered_an_existing_one(session):
    assert candidates(session, "rename colinit ") == []
    assert candidates(session, 'load "m.cll.1.dat" as ') == []
    assert candidates(session, 'export colinit "c.txt" as ') == ["csv", "extrap"]
    assert candidates(session, "x = aggregate ") == ["colinit", "rowinit", "f"]   # experiments only
    assert candidates(session, "suggest ") == ["colinit", "rowinit", "f"]


# ---------------------------------------------------------------- 4. comments
@pytest.mark.parametrize("text", ["# ", "#", "fit # co", "fit colinit # see fit ", 'fit colinit # "quoted',
                                  "fit colinit # a; fit ", "fit colinit\n# fit "])
def test_nothing_is_offered_in_a_comment(session, text):
    assert offered(session, text) == []


def test_a_hash_inside_a_string_is_no_comment(session):
    assert candidates(session, 'export colinit "a#b.csv" ') == ["as", "replace"]
    assert candidates(session, '# it\'s a comment\nfit ') == ["colinit", "rowinit", "f"]


# ---------------------------------------------------------------- 5. the word being typed
def test_the_word_being_typed_is_completed(session):
    assert candidates(session, "pre") == ["predict"]
    assert candidates(session, "show colinit.mo") == ["colinit.model"]
    assert candidates(session, "fit co") == ["colinit"]
    assert candidates(session, "set th") == ["threshold"]
    assert candidates(session, "fit colinit") == []                      # typed whole already
    assert candidates(session, "x = colinit where N <= 64 and\nra") == ["rank"]   # a continued line
    assert candidates(session, "fitt x; fit ") == ["colinit", "rowinit", "f"]    # an earlier mistake


# ---------------------------------------------------------------- the REPL, from the keys to the statement run
def type_at_prompt(session, monkeypatch, steps):
    """Run the REPL on `session` typing each (keys, line) of `steps`: the keys, then wait until
    the line being edited reads `line` (completion runs in the background: a key sent before it
    ends would come first); Ctrl-C and Ctrl-D at the end. Return stdout and stderr."""
    prompts = []

    def make_prompt(*args, **kwargs):
        prompts.append(made := make(*args, **kwargs))
        return made
    make = repl.make_prompt
    monkeypatch.setattr(repl, "make_prompt", make_prompt)
    out, err, failed = io.StringIO(), io.StringIO(), []

    def typist():
        try:
            for keys, line in steps:
                pipe.send_text(keys)
                end = time.monotonic() + 60
                while line is not None and (not prompts or prompts[0].default_buffer.text != line):
                    if time.monotonic() > end:
                        failed.append(f"the line never read {line!r}: {prompts[0].default_buffer.text!r}")
                        return
                    time.sleep(0.02)
        finally:
            pipe.send_text("\x03\x04")
    with create_pipe_input() as pipe:
        thread = threading.Thread(target=typist)
        thread.start()
        repl.run_repl(session, input=pipe, output=DummyOutput(), history=InMemoryHistory(), out=out, err=err)
        thread.join()
    assert not failed, failed
    return out.getvalue(), err.getvalue()


def test_tab_at_the_prompt_completes_and_the_statement_runs(session, monkeypatch):
    out, err = type_at_prompt(session, monkeypatch, [
        ("x = colinit with ti\t", "x = colinit with time="),
        ("time * 2\r", None),
        ('g = f formula "f[0] + f[1]*N/P*lo\t', 'g = f formula "f[0] + f[1]*N/P*log'),
        ('(N)"\r', None),
        ("dr\t", "drop"),
        (" colinit.model colinit[0], colinit[1\t", "drop colinit.model colinit[0], colinit[1]"),
        ("\x03pre\t", "predict")])
    assert err == "" and "Traceback" not in out
    assert session.objects["x"].columns["time"][0] == 2 * session.objects["colinit"].columns["time"][0]
    assert str(session.objects["g"].formula) == "f[0] + f[1]*N/P*log(N)"


# ---------------------------------------------------------------- never a traceback
fragments = st.sampled_from(["fit", "drop", "with", "formula", "where", "x =", "colinit", "f", "colinit.model",
                             '"', "'", "#", '"f[0] + f[1]*', "log(", "N", "P", ",", ";", "\n", "\\\n", "(",
                             "[", "]", "0", "=", " ", "as", "rename", "export", "timeline", "predict", "on"])


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(pieces=st.lists(fragments, max_size=12), tail=st.text(max_size=8))
def test_completion_of_any_text_raises_nothing(session, pieces, tail):
    """Whatever was typed, Tab offers words that complete the word at the cursor, or nothing."""
    text = " ".join(pieces) + tail
    for cut in range(len(text) + 1):
        words = candidates(session, text[:cut])
        assert words is None or all(isinstance(w, str) and w for w in words)
