"""The REPL driven through prompt_toolkit's pipe input: multi-line input, errors, completion."""
import io

from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.document import Document
from prompt_toolkit.history import InMemoryHistory
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput

from llac.repl import LlacCompleter, LlacLexer, run_repl
from llac.session import Session
from test_llac_fixtures import write_matinit


def drive(session, keys):
    out, err = io.StringIO(), io.StringIO()
    with create_pipe_input() as pipe:
        pipe.send_text(keys)
        run_repl(session, input=pipe, output=DummyOutput(), history=InMemoryHistory(), out=out, err=err)
    return out.getvalue(), err.getvalue()


def completions(session, text):
    return [c.text for c in LlacCompleter(session).get_completions(Document(text, len(text)), CompleteEvent())]


def loaded(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write_matinit(tmp_path / "m.cll.1.dat")
    session = Session()
    list(session.execute('load "m.cll.1.dat"'))
    return session


def test_errors_do_not_end_the_repl_and_ctrl_d_leaves(tmp_path, monkeypatch):
    session = loaded(tmp_path, monkeypatch)
    out, err = drive(session, "fitt colinit\rshow nothing\rlist\r\x04")
    assert "unknown command 'fitt'" in err and "no object called 'nothing'" in err
    assert "colinit  experiment" in out


def test_incomplete_statement_continues_on_next_line(tmp_path, monkeypatch):
    session = loaded(tmp_path, monkeypatch)
    out, err = drive(session, "small = colinit where N <= 64 and\rrank == 0\r\x04")
    assert err == "" and "created small: 9 records" in out


def test_ctrl_c_clears_the_line(tmp_path, monkeypatch):
    session = loaded(tmp_path, monkeypatch)
    out, err = drive(session, "delete colinit\x03list\r\x04")
    assert "colinit" in session.objects and "deleted" not in out


def test_completion_of_commands_objects_columns_and_paths(tmp_path, monkeypatch):
    session = loaded(tmp_path, monkeypatch)
    assert completions(session, "pre") == ["predict"]
    assert completions(session, "show col") == ["colinit"]
    assert "time" in completions(session, "x = colinit where ti")
    assert completions(session, "help des") == ["describe"]
    assert completions(session, 'load "m.cll') == [".1.dat"]
    assert completions(session, "plot bal") == ["balance"]  # a keyword only the grammar knows
    assert completions(session, "plot colinit log") == ["loglog"]


def test_lexer_highlights_keywords_objects_strings(tmp_path, monkeypatch):
    session = loaded(tmp_path, monkeypatch)
    line = LlacLexer(session).lex_document(Document('fit colinit # go'))(0)
    styles = {text: style for style, text in line}
    assert styles["fit"] == "class:keyword" and styles["colinit"] == "class:object"
    assert styles["# go"] == "class:comment"
