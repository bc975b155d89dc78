"""What the REPL offers on Tab, following the grammar: Lark's interactive parser reads the
statement up to the word being typed and says which terminals may come next; each terminal is
turned into words from the grammar itself (keywords) or from the live session (objects,
settings, a model's variables, columns, trace files).

    candidates(session, "set aggregate ")  ->  ["median", "min", "mean"]
    candidates(session, "predict colinit ") -> ["N=", "at"]
"""
from __future__ import annotations

import copy
import dataclasses
import os
import re

from lark import Token
from lark.exceptions import LarkError
from lark.lexer import PatternRE, PatternStr

from cll_grammar.grammars import open_grammar
from llac.commands import REGISTRY
from llac.commands.parallel import BY_WORDS
from llac.experiment import Experiment
from llac.fit_data import AGGREGATES
from llac.parse import POSTLEX

PLOT_SCALES = ("log", "loglog")
NAME_SLOTS = ("OBJECT", "VARIABLE", "VARIABLE_IS")   # the terminals that take a name (llac.lark)
DATA_SUFFIXES = (".dat", ".csv")
ALTERNATIVES = re.compile(r"\(\?:([a-z]+(?:\|[a-z]+)+)\)")   # how Lark compiles a terminal of keywords


def candidates(session, before: str) -> list[str] | None:
    """The words that may follow `before` (the statement up to the word being typed), in the
    order they read best; None when `before` does not parse (the caller then offers anything)."""
    parser = open_grammar("llac.lark", postlex=POSTLEX)
    try:
        interactive = parser.parse_interactive(before)
        tokens = list(interactive.iter_parse())
    except LarkError:
        return None
    literals = {t.name: t.pattern.value for t in parser.terminals if isinstance(t.pattern, PatternStr)}
    choices = {t.name: ALTERNATIVES.fullmatch(t.pattern.value)[1].split("|") for t in parser.terminals
               if isinstance(t.pattern, PatternRE) and ALTERNATIVES.fullmatch(t.pattern.value)}
    context = _Context(session, tokens)
    used = set(context.args) if context.command in ("plot", "timeline") else set()   # each option once
    words = []
    for terminal in _accepted(interactive, {t.name for t in parser.terminals}):
        if terminal in NAME_SLOTS:
            words += context.objects()
        elif terminal == "formula__NAME":
            words += context.columns()
        elif terminal == "LOGSCALE":            # one scale per plot
            words += PLOT_SCALES if not used & set(PLOT_SCALES) else ()
        elif terminal == "STRING" and context.command == "load":
            words += _data_files()
        elif literals.get(terminal, "").isalpha() and literals[terminal] not in used:
            words.append(literals[terminal])
        elif terminal in choices:       # a terminal of keywords, `"list" | "show" | "compare"`
            words += sorted(choices[terminal])
    return list(dict.fromkeys(words))


def _accepted(interactive, terminals: set[str]) -> list[str]:
    """The terminals the parser would take next (Lark's `accepts()` skips the formula's
    namespaced terminals such as formula__NAME, so each candidate is tried on a copy here), in
    name order, the name slots (NAME_SLOTS) where OBJECT sorts."""
    accepted = []
    for name in sorted(interactive.choices(), key=lambda n: (NAME_SLOTS[0], n) if n in NAME_SLOTS else (n, "")):
        if name in terminals:
            trial = copy.copy(interactive)
            try:
                trial.feed_token(Token(name, ""))
            except LarkError:
                continue
            accepted.append(name)
    return accepted


@dataclasses.dataclass
class _Context:
    """The statement read so far: its command word and arguments, to pick the right names."""
    session: object
    tokens: list

    def __post_init__(self):
        tokens = self.tokens
        if len(tokens) >= 2 and tokens[1].type == "EQUAL":   # NAME = source
            tokens = tokens[2:]
        self.command = str(tokens[0]) if tokens else ""
        self.args = [str(t) for t in tokens[1:]]
        self.previous = str(self.tokens[-1]) if self.tokens else ""

    def objects(self) -> list[str]:
        """Names for an OBJECT slot: what that slot of this command takes."""
        session, args = self.session, self.args
        everything = list(session.objects)
        experiments = [n for n, o in session.objects.items() if isinstance(o, Experiment)]
        if not self.tokens:
            return everything
        if self.command == "set":
            return _settings() if not args else _setting_values(args[0])
        if self.command == "help":
            return list(REGISTRY)
        if self.previous in ("vs", "by") and self.command in ("plot", "predict"):
            return self.variables(args[0])
        if self.previous == "by" and self.command == "aggregate":
            return list(AGGREGATES)
        if self.previous == "by" and self.command in ("balance", "comm"):
            return list(BY_WORDS)
        if self.command in ("predict", "obsp", "timeline") and "with" in args:
            offered = ("g", "L") if self.command == "predict" else ("g", "L", "o")
            return [f"{p}=" for p in offered if p not in args[args.index("with"):]]
        if self.previous == "on" and self.command in ("predict", "obsp", "timeline") or self.command == "machine" and args \
                and args[0] in ("show", "compare", "mountain", "bsp", "export"):
            return _machine_names()
        if self.command == "obsp":
            return list(session.supersteps)
        if self.command == "timeline":
            return self.run_selectors() if args else [*experiments, *session.supersteps]
        if self.command == "predict" and args and self.previous != "at":
            given = {args[i - 1] for i, a in enumerate(args) if a == "=" and i}
            return [f"{v}=" for v in self.variables(args[0]) if v not in given]
        if self.command in ("fit", "merge", "balance", "comm") or self.previous == "at":
            return experiments
        return everything

    def variables(self, name: str) -> list[str]:
        """The formula variables of the object called `name` (an experiment or a model)."""
        obj = self.session.objects.get(name)
        return list(obj.formula.variables) if obj is not None else []

    def run_selectors(self) -> list[str]:
        """`timeline NAME ` picks its run by P, run and the sync experiment's variables, each once."""
        given = {self.args[i - 1] for i, a in enumerate(self.args) if a == "=" and i}
        names = ["P", "run", *(v for v in self.variables(self.args[0]) if v != "P")]
        return [f"{n}=" for n in names if n not in given]

    def columns(self) -> list[str]:
        """Columns for an expression: those of the experiment the statement names first."""
        obj = self.session.objects.get(self.command)
        if isinstance(obj, Experiment):
            return list(obj.column_names)
        return list(self.session.columns())


def _settings() -> list[str]:
    from llac.fit import FitSettings
    return [f.name for f in dataclasses.fields(FitSettings)]


def _setting_values(name: str) -> list[str]:
    """The words a setting takes: its words (aggregate, constants), or on/off for a switch."""
    from llac.fit import SETTING_WORDS, FitSettings
    default = {f.name: f.default for f in dataclasses.fields(FitSettings)}.get(name)
    if isinstance(default, bool):
        return ["on", "off"]
    return list(SETTING_WORDS.get(name, ()))


def _machine_names() -> list[str]:
    """The machines of the database and their labelled runs (none when there is no database)."""
    from llac.machines import machine_references
    return machine_references()


def _data_files() -> list[str]:
    """Trace and CSV files of the current directory, quoted as `load` takes them."""
    try:
        names = sorted(os.listdir("."))
    except OSError:
        return []
    return [f'"{n}"' for n in names if n.lower().endswith(DATA_SUFFIXES)]
