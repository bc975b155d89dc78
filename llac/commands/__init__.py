"""The one command registry: each command's name, syntax, help, examples and handler.

Dispatch (`handler_for`), `help` and the REPL's completion all read `REGISTRY`, so they
cannot disagree. A handler takes (session, statement) and returns a list of results
(`llac.commands.results`), or a `Produced` object for commands that make an object.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from llac.errors import LlacError


@dataclass(frozen=True)
class CommandSpec:
    """A command as the user sees it: `name` is its keyword (or the operator, like `where`)."""
    name: str
    syntax: str
    help: str
    examples: tuple[str, ...]
    statement_types: tuple[type, ...]
    handler: Callable
    starts_statement: bool = True


REGISTRY: dict[str, CommandSpec] = {}
HANDLERS: dict[type, CommandSpec] = {}
# the order of `help` and of the reference in docs/llac-language.md
ORDER = ("load", "list", "show", "describe", "rename", "delete", "export", "set", "fit", "drop", "suggest",
         "predict", "report", "plot", "balance", "comm", "obsp", "timeline", "machine", "help",
         "=", "copy", "where", "with", "formula", "merge", "aggregate", "table3")


def command(name: str, syntax: str, help: str, examples, *types, starts_statement=True):
    """Decorator: register a handler for the statement `types` under the command `name`."""
    def register(handler):
        spec = CommandSpec(name, syntax, " ".join(help.split()), tuple(examples), types,
                           handler, starts_statement)
        REGISTRY[name] = spec
        for kind in types:
            HANDLERS[kind] = spec
        return handler
    return register


def handler_for(statement) -> CommandSpec:
    """The registered command that runs this kind of statement."""
    load_all()
    try:
        return HANDLERS[type(statement)]
    except KeyError:
        raise LlacError(f"no handler for {type(statement).__name__}", statement.span) from None


def ordered() -> list[CommandSpec]:
    """All registered commands in the documented order."""
    load_all()
    rank = {name: i for i, name in enumerate(ORDER)}
    return sorted(REGISTRY.values(), key=lambda spec: rank.get(spec.name, len(ORDER)))


def keywords() -> tuple[str, ...]:
    """The words that can start a statement, for error suggestions and completion."""
    load_all()
    return tuple(name for name, spec in REGISTRY.items() if spec.starts_statement)


def load_all() -> None:
    """Import the command modules so that they register themselves (cheap after the first time)."""
    from llac.commands import data, derive, modeling, helptext, machine, obsp, parallel, timeline  # noqa: F401
