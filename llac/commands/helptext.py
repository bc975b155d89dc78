"""The help command: its text comes from the command registry, the single source of truth."""
from __future__ import annotations

import re
import textwrap

from cll_grammar.span import suggest
from llac import ast
from llac.commands import REGISTRY, command, ordered
from llac.commands.results import Text
from llac.errors import LlacError

INTRO = """llac: model the run time of program parts from CALL traces.
Statements end at a newline or ';'; '#' starts a comment; a statement continues on the
next line after a trailing operator or comma, inside parentheses, or after a '\\'.
Commands (help COMMAND for details and examples):"""
MAKING = """Making objects: NAME = SOURCE (an existing NAME is replaced), where SOURCE is one of
(fit and drop too, when the model gets a name of its own):"""


@command("help", "help [COMMAND]", """List the commands, or explain one with its syntax and
         examples.""", ["help", "help predict"], ast.Help)
def help_(session, statement: ast.Help):
    if statement.topic is None:
        return [Text(overview())]
    name = statement.topic.text
    if name not in REGISTRY:
        raise LlacError(f"no command called {name!r}{suggest(name, REGISTRY)}; type 'help' for "
                        f"the list", statement.topic.span)
    return [Text(command_help(REGISTRY[name]))]


def overview() -> str:
    """`help` alone: the commands that start a statement, then the sources that make an object
    after `NAME =`; forms that are not typed alone (`=`, Table 3's `predict ... by`) are only
    topics of `help WORD`."""
    commands = [spec for spec in ordered() if spec.starts_statement and not makes_object(spec)]
    lines = [INTRO] + [textwrap.fill(first_sentence(spec.help), 78, initial_indent=f"  {spec.name:<10}",
                                     subsequent_indent=" " * 12) for spec in commands]
    lines.append(MAKING)
    lines += [f"  {spec.syntax.removeprefix('NAME = '):<52} help {spec.name}"
              for spec in ordered() if makes_object(spec)]
    return "\n".join(lines)


def makes_object(spec) -> bool:
    """True for a source that only makes sense after `NAME =` (where, merge, ...)."""
    return all(issubclass(t, ast.Source) and t.default_target is ast.Source.default_target
               for t in spec.statement_types)


def first_sentence(text: str) -> str:
    """The help paragraph's first sentence."""
    return re.split(r"(?<=\.)\s+(?=[A-Z`])", text)[0]


def command_help(spec) -> str:
    """Syntax, paragraph and examples of one command, as `help NAME` shows them."""
    examples = "\n".join(f"    {e}" for e in spec.examples)
    return f"{spec.syntax}\n\n{textwrap.fill(spec.help, 78)}\n\nExamples:\n{examples}"


def reference_markdown() -> str:
    """The command reference of docs/llac-language.md, generated from the registry
    (regenerate with `python -c "from llac.commands.helptext import reference_markdown as r; print(r())"`)."""
    parts = []
    for spec in ordered():
        examples = "\n".join(spec.examples)
        parts.append(f"### `{spec.name}`\n\n`{spec.syntax}`\n\n{textwrap.fill(spec.help, 92)}\n\n"
                     f"```\n{examples}\n```\n")
    return "\n".join(parts)
