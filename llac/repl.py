"""The interactive llac: prompt_toolkit with history, completion, highlighting, multi-line input.

Enter runs the statement when it is complete; when it stops in the middle (a trailing operator,
an open parenthesis, a trailing backslash) Enter starts a new line instead. Ctrl-C clears the
line at the prompt and cancels a running statement; Ctrl-D leaves. Errors (even llac's own
bugs) are shown and the session goes on with every object it had.
"""
from __future__ import annotations

import os
import re
import sys
import traceback

from prompt_toolkit import PromptSession
from prompt_toolkit.completion import Completer, Completion, PathCompleter
from prompt_toolkit.document import Document
from prompt_toolkit.history import FileHistory
from prompt_toolkit.key_binding import KeyBindings
from prompt_toolkit.lexers import Lexer
from prompt_toolkit.styles import Style

from llac.commands import REGISTRY
from llac.completion import VALUE_WORDS, candidates, typed_word
from llac.driver import run_source
from llac.errors import internal_error
from llac.parse import grammar_keywords, incomplete

TOKEN = re.compile(r"(?P<comment>#.*)|(?P<string>\"[^\"]*\"?|'[^']*'?)|(?P<number>\d+(\.\d+)?([eE][-+]?\d+)?)"
                   r"|(?P<word>[A-Za-z_][A-Za-z_0-9.@]*)|(?P<other>.)")
STYLE = Style.from_dict({"keyword": "bold ansiblue", "object": "ansigreen", "string": "ansiyellow",
                         "number": "ansicyan", "comment": "italic ansibrightblack"})


def history_path() -> str:
    """$LLAC_HISTORY, or ~/.llac_history."""
    return os.environ.get("LLAC_HISTORY") or os.path.expanduser("~/.llac_history")


class LlacCompleter(Completer):
    """Completes what the grammar allows at the cursor (`llac.completion`): command names,
    the objects, settings, variables or columns that fit there, option words, trace files,
    a formula's variables and functions; paths inside other quotes; nothing in a comment.
    Where the statement so far does not parse, any known word."""

    def __init__(self, session):
        self.session = session
        self.paths = PathCompleter(expanduser=True)

    def get_completions(self, document: Document, complete_event):
        """Yield completions that replace the word before the cursor."""
        text = document.text_before_cursor
        words = candidates(self.session, text)
        if words is None:       # inside a quoted file name
            partial = text[max(text.rfind('"'), text.rfind("'")) + 1:]
            yield from self.paths.get_completions(Document(partial, len(partial)), complete_event)
            return
        word = typed_word(text)
        for candidate in words:
            yield Completion(candidate, start_position=-len(word))


class LlacLexer(Lexer):
    """Highlights keywords, object names, strings, numbers and comments."""

    def __init__(self, session):
        self.session = session

    def lex_document(self, document: Document):
        """A function from line number to the line's styled fragments."""
        words = set(REGISTRY) | set(grammar_keywords()) | set(VALUE_WORDS)
        lines = document.lines

        def line(number: int):
            fragments = []
            for match in TOKEN.finditer(lines[number]):
                kind, text = match.lastgroup, match.group()
                if kind == "word":
                    kind = "keyword" if text in words else "object" if text in self.session.objects else ""
                fragments.append((f"class:{kind}" if kind and kind != "other" else "", text))
            return fragments
        return line


def _key_bindings() -> KeyBindings:
    bindings = KeyBindings()

    @bindings.add("enter")
    def _(event):
        buffer = event.current_buffer
        if incomplete(buffer.text):
            buffer.insert_text("\n")
        else:
            buffer.validate_and_handle()
    return bindings


CONTINUATION = "  ...  "      # before each further line of a statement


def continuation(width: int, line_number: int, wrap_count: int) -> str:
    """What stands before a line of the input after its first: `...` before a line of the
    statement that the user began with Enter, blanks of the same width before the rest of a
    line that only the terminal's width wrapped (a `...` there said a line break was typed)."""
    return " " * len(CONTINUATION) if wrap_count else CONTINUATION


def make_prompt(session, input=None, output=None, history=None) -> PromptSession:
    """A PromptSession wired to `session` (pass input/output/history to drive it in tests)."""
    return PromptSession(
        history=history if history is not None else FileHistory(history_path()),
        completer=LlacCompleter(session), lexer=LlacLexer(session), style=STYLE,
        multiline=True, key_bindings=_key_bindings(), prompt_continuation=continuation,
        complete_while_typing=False, input=input, output=output)


def run_repl(session, input=None, output=None, history=None, out=None, err=None, debug=False) -> None:
    """Read, run and show statements until Ctrl-D. Nothing but Ctrl-D ends it: errors are
    reported, Ctrl-C cancels the running statement, and an internal error prints one line
    (its traceback too with `debug`); the session's objects are kept in every case."""
    out, err = out or sys.stdout, err or sys.stderr
    prompt = make_prompt(session, input, output, history)
    print("llac — type 'help' for the commands, Ctrl-D to leave", file=out)
    while True:
        try:
            text = prompt.prompt("llac> ")
        except KeyboardInterrupt:
            continue
        except EOFError:
            return
        except Exception as error:   # a bug in completion or highlighting: keep the session
            _internal(error, err, debug)
            continue
        if text.strip():
            run_statements(session, text, out, err, debug)


def run_statements(session, text: str, out, err, debug: bool = False) -> None:
    """Run `text` and show its results or its error; Ctrl-C cancels it and an internal error
    is reported, both without ending the REPL (the statement cut short leaves nothing behind)."""
    try:
        run_source(session, text, "<input>", out, err, say_rest=True)
    except KeyboardInterrupt:
        print("interrupted: the running statement was cancelled and left nothing behind", file=err, flush=True)
    except Exception as error:
        _internal(error, err, debug)


def _internal(error: Exception, err, debug: bool) -> None:
    if debug:
        traceback.print_exception(error, file=err)
    print(internal_error(error), file=err, flush=True)
