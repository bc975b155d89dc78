"""The REPL driven through prompt_toolkit's pipe input: multi-line input, errors, completion."""
import dataclasses
import fcntl
import io
import os
import pty
import re
import select
import signal
import struct
import sys
import termios
import time

import numpy as np
import pytest

from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.document import Document
from prompt_toolkit.history import InMemoryHistory
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput

from llac import ast
from llac.commands import HANDLERS, load_all
from llac.repl import LlacCompleter, LlacLexer, run_repl
from llac.session import Session
from support.traces import write_matinit


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


def test_internal_error_is_one_line_and_the_session_goes_on(tmp_path, monkeypatch):
    load_all()
    session = loaded(tmp_path, monkeypatch)
    broken = dataclasses.replace(HANDLERS[ast.List], handler=lambda s, st: 1 / 0)
    monkeypatch.setitem(HANDLERS, ast.List, broken)
    out, err = drive(session, "list\rdelete rowinit\r\x04")
    assert err.strip() == "internal error: ZeroDivisionError: division by zero (run with --debug for details)"
    assert "deleted rowinit" in out and "colinit" in session.objects


def test_internal_error_with_debug_shows_the_traceback(tmp_path, monkeypatch):
    load_all()
    session = loaded(tmp_path, monkeypatch)
    broken = dataclasses.replace(HANDLERS[ast.List], handler=lambda s, st: 1 / 0)
    monkeypatch.setitem(HANDLERS, ast.List, broken)
    out, err = io.StringIO(), io.StringIO()
    with create_pipe_input() as pipe:
        pipe.send_text("list\r\x04")
        run_repl(session, input=pipe, output=DummyOutput(), history=InMemoryHistory(), out=out, err=err,
                 debug=True)
    assert "Traceback (most recent call last)" in err.getvalue() and "internal error: ZeroDivisionError" in err.getvalue()


def test_a_statement_cut_short_leaves_nothing_behind(tmp_path, monkeypatch):
    """Ctrl-C after load stored its first experiment: the session is as before the load."""
    monkeypatch.chdir(tmp_path)
    write_matinit(tmp_path / "m.cll.1.dat")
    session = Session()
    list(session.execute("set seed 3"))
    store = Session.store

    def store_then_interrupt(self, name, obj):
        store(self, name, obj)
        raise KeyboardInterrupt
    monkeypatch.setattr(Session, "store", store_then_interrupt)
    with pytest.raises(KeyboardInterrupt):
        list(session.execute('set seed 5; load "m.cll.1.dat"'))
    assert session.objects == {} and session.changed_settings == {"seed": 5}


# ---------------------------------------------------------------- the REPL under a real terminal
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b[=>]|\r")


class Terminal:
    """`python -m llac` on a pseudo-terminal, driven by keystrokes as a user types them."""

    def __init__(self, cwd):
        self.pid, self.fd = pty.fork()
        if self.pid == 0:   # the child: llac's REPL on the terminal
            os.chdir(cwd)
            signal.signal(signal.SIGINT, signal.SIG_DFL)   # as a terminal gives it, even when the
            # suite runs as a background job (which starts with SIGINT ignored)
            os.environ.update(TERM="xterm", PROMPT_TOOLKIT_NO_CPR="1", LLAC_HISTORY=str(cwd / "history"))
            os.execvp(sys.executable, [sys.executable, "-m", "llac"])
        self.screen, self.seen = "", 0

    def expect(self, pattern: str, timeout: float = 60) -> str:
        """Wait until the text after the last match matches `pattern`; return that text."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            match = re.search(pattern, ANSI.sub("", self.screen)[self.seen:])
            if match:
                text = ANSI.sub("", self.screen)[self.seen:self.seen + match.end()]
                self.seen += match.end()
                return text
            if select.select([self.fd], [], [], 0.2)[0]:
                try:
                    self.screen += os.read(self.fd, 65536).decode(errors="replace")
                except OSError:
                    break
        raise AssertionError(f"no {pattern!r} on the terminal: {ANSI.sub('', self.screen)[-1500:]!r}")

    def type(self, keys: str, shows: str = "", prompt: bool = True) -> str:
        """Type `keys`, wait until the terminal shows `shows` and then (with `prompt`) the next
        prompt, so that no key arrives while the terminal is not in the REPL's raw mode
        (there Ctrl-C and Ctrl-D would be the terminal's); return what was shown."""
        os.write(self.fd, keys.encode())
        return self.expect(shows + ("[\\s\\S]*?llac>" if prompt else ""))

    def close(self) -> int:
        """Ctrl-D, and the exit status (the REPL is killed if it has not left after 30 s)."""
        os.write(self.fd, b"\x04")
        end = time.monotonic() + 30
        while (done := os.waitpid(self.pid, os.WNOHANG))[0] == 0 and time.monotonic() < end:
            time.sleep(0.1)
        if done[0] == 0:
            os.kill(self.pid, signal.SIGKILL)
            done = os.waitpid(self.pid, 0)
        os.close(self.fd)
        return os.waitstatus_to_exitcode(done[1])


def write_slow_trace(path, n=60_000):
    """A trace whose fit takes about a second (60,000 sample points)."""
    rng = np.random.default_rng(0)
    sizes = np.arange(1, n + 1, dtype=float)
    times = 1e-6 * sizes * (1 + 0.05 * rng.standard_normal(n)) + np.where(sizes > n / 4, 1e-3, 0)
    header = ("#cll-trace 1\n#program: slow\n#procs: 1\n#status: complete\n#experiment: s\n"
              f"#  formula: s[0] + s[1]*N\n#  columns: rank thread time N\n#  records: {n}\n#data\n")
    body = "".join(f"s 0 0 {t:.6e} {s:g}\n" for t, s in zip(times, sizes))
    path.write_text(header + body + "#end\n")


def test_ctrl_c_cancels_a_running_fit_and_keeps_the_session(tmp_path):
    write_matinit(tmp_path / "m.cll.1.dat")
    write_slow_trace(tmp_path / "slow.dat")
    terminal = Terminal(tmp_path)
    try:
        terminal.expect("llac>")
        terminal.type('load "m.cll.1.dat"; fit colinit\r', "created colinit.model")
        terminal.type('load "slow.dat"; set bootstrap 9999\r', "bootstrap = 9999")
        fits = "; ".join(["fit s"] * 100)   # about a second each: still running after 1 s
        terminal.type(fits + "\r", "fit s\n", prompt=False)
        time.sleep(1)
        shown = terminal.type("\x03", "interrupted: the running statement was cancelled")
        assert "Traceback" not in shown and shown.count("created s.model") < 100
        listing = terminal.type("list\r", r"objects\n")
        assert re.search(r"colinit\.model\s+model", listing) and re.search(r"\bs\s+experiment", listing)
        terminal.type("fitt\r", "unknown command 'fitt'")
        terminal.type("delete colinit\x03")    # Ctrl-C at the prompt clears the line
        terminal.type("fit rowinit\r", "created rowinit.model")
        assert "deleted" not in terminal.screen
    finally:
        assert terminal.close() == 0


# ---------------------------------------------------------------- completion follows the grammar
def test_completion_offers_settings_then_their_values(tmp_path, monkeypatch):
    session = loaded(tmp_path, monkeypatch)
    assert completions(session, "set ") == ["threshold", "maxintervals", "minpoints", "alpha", "aggregate",
                                            "split", "seed", "bootstrap", "maxpieces", "prune", "constants", "trend"]
    assert completions(session, "set aggregate ") == ["median", "min", "mean"]
    assert completions(session, "set constants ") == ["nonnegative", "free"]
    assert completions(session, "set aggregate m") == ["median", "min", "mean"]
    assert completions(session, "set split ") == ["on", "off"]
    assert completions(session, "set trend ") == ["on", "off"]
    assert completions(session, "set threshold ") == []


def test_completion_offers_experiments_to_fit_and_a_models_variables_to_predict(tmp_path, monkeypatch):
    session = loaded(tmp_path, monkeypatch)
    list(session.execute("fit colinit"))
    assert completions(session, "fit ") == ["colinit", "rowinit"]
    assert completions(session, "show ") == ["colinit", "rowinit", "colinit.model"]
    assert completions(session, "predict colinit.model ") == ["at", "N=", "on", "with"]
    assert completions(session, "predict colinit.model at ") == ["colinit", "rowinit"]
    assert completions(session, "predict colinit N=4 ") == ["on", "with"]   # every variable is given


def test_completion_offers_machines_after_on(tmp_path, monkeypatch):
    from cll_grammar.machinedb import MachineDB
    from support.machines import probe_run
    monkeypatch.setenv("LLAC_MACHINE_DB", str(tmp_path / "m.sqlite"))
    with MachineDB() as db:
        db.store(probe_run())
        db.store(probe_run(label="loaded"))
    session = loaded(tmp_path, monkeypatch)
    assert completions(session, "predict colinit N=4 on ") == ["node1", "node1@loaded"]
    assert completions(session, "machine show ") == ["node1", "node1@loaded"]
    assert completions(session, "predict colinit N=4 with ") == ["g=", "L="]
    assert completions(session, "predict colinit N=4 with g=1, ") == ["L="]


def test_completion_offers_plot_options_then_variables(tmp_path, monkeypatch):
    session = loaded(tmp_path, monkeypatch)
    assert completions(session, "plot colinit ") == ["by", "log", "loglog", "residuals", "to", "vs"]
    assert completions(session, "plot colinit vs ") == ["N"]
    assert completions(session, "plot colinit loglog ") == ["by", "residuals", "to", "vs"]


def test_completion_offers_trace_files_to_load_and_commands_first(tmp_path, monkeypatch):
    session = loaded(tmp_path, monkeypatch)
    (tmp_path / "data.csv").write_text("time,N\n1,2\n")
    (tmp_path / "notes.txt").write_text("")
    assert completions(session, "load ") == ['"data.csv"', '"m.cll.1.dat"']
    assert completions(session, "load m") == ['"m.cll.1.dat"']
    assert completions(session, "")[:3] == ["balance", "comm", "delete"]
    assert "merge" not in completions(session, "") and "merge" in completions(session, "x = ")
    assert completions(session, "x = aggregate colinit by ") == ["median", "min", "mean"]
    assert completions(session, "balance colinit by ") == ["rank", "thread", "P"]
    assert "time" in completions(session, "x = colinit with y = ")


def test_completion_after_a_syntax_error_offers_any_known_word(tmp_path, monkeypatch):
    session = loaded(tmp_path, monkeypatch)
    assert "colinit" in completions(session, "show ) co")


def test_a_line_wrapped_by_a_narrow_terminal_has_no_continuation_dots(tmp_path):
    """`...` marks a line of the statement begun with Enter; the rest of a long line that only
    the terminal's width wrapped is indented with blanks (it showed `...`, as if Enter had been
    typed there)."""
    write_matinit(tmp_path / "m.cll.1.dat")
    terminal = Terminal(tmp_path)
    fcntl.ioctl(terminal.fd, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 40, 0, 0))
    try:
        terminal.expect("llac>")
        long_comment = " ".join(f"word{i}" for i in range(20))          # 2-3 screen lines at 40 columns
        shown = terminal.type('load "m.cll.1.dat" # ' + long_comment, "word19", prompt=False)
        assert "..." not in shown, shown
        shown = terminal.type("\rsmall = colinit where N <= 64 and\r", r"\.\.\.", prompt=False)
        terminal.type("rank == 0\r", "created small")
    finally:
        assert terminal.close() == 0
