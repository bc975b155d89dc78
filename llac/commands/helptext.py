"""The help command: its text comes from the command registry, the single source of truth."""
from __future__ import annotations

import re
import textwrap

from llac import ast
from llac.commands import REGISTRY, command, ordered
from llac.commands.results import Text
from llac.errors import LlacError, suggest

INTRO = """llac: model the run time of program parts from CALL traces.
Statements end at a newline or ';'; '#' starts a comment; a statement continues on the
next line after a trailing operator or comma, inside parentheses, or after a '\\'.
Commands (help COMMAND for details and examples):"""


@command("help", "help [COMMAND]", """List the commands, or explain one with its syntax and
         examples.""", ["help", "help predict"], ast.Help)
def help_(session, statement: ast.Help):
    if statement.topic is None:
        lines = [INTRO] + [textwrap.fill(first_sentence(spec.help), 78, initial_indent=f"  {spec.name:<10}",
                                         subsequent_indent=" " * 12)
                           for spec in ordered()]
        return [Text("\n".join(lines))]
    name = statement.topic.text
    if name not in REGISTRY:
        raise LlacError(f"no command called {name!r}{suggest(name, REGISTRY)}; type 'help' for "
                        f"the list", statement.topic.span)
    return [Text(command_help(REGISTRY[name]))]


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
