"""What the REPL offers on Tab, following the grammar: Lark's interactive parser reads the
input up to the word being typed and says which terminals may come next; each terminal is
turned into words from the grammar itself (keywords) or from the live session (objects,
settings, a model's variables, columns, trace files). Inside a formula string the formula
grammar decides, and offers the experiment's variables and the functions; in a comment
nothing is offered. The words are those that complete the word being typed.

    candidates(session, "set aggregate ")  ->  ["median", "min", "mean"]
    candidates(session, "predict colinit ") -> ["N=", "at"]
    candidates(session, "pre")              -> ["predict"]
"""
from __future__ import annotations

import copy
import dataclasses
import os
import re

from lark import Token
from lark.exceptions import LarkError
from lark.lexer import PatternRE, PatternStr

from cll_grammar.formula import FUNCTIONS
from cll_grammar.grammars import open_grammar
from llac.commands import REGISTRY
from llac.commands.data import EXPORT_FORMATS
from llac.commands.parallel import BY_WORDS
from llac.experiment import Experiment
from llac.fit_data import AGGREGATES
from llac.parse import POSTLEX, grammar_keywords

PLOT_SCALES = ("log", "loglog")
NAME_SLOTS = ("OBJECT", "VARIABLE", "VARIABLE_IS")   # the terminals that take a name (llac.lark)
SEPARATORS = ("_NL", "SEMICOLON")                    # the tokens that end a statement
DATA_SUFFIXES = (".dat", ".csv")
ALTERNATIVES = re.compile(r"\(\?:([a-z]+(?:\|[a-z]+)+)\)")   # how Lark compiles a terminal of keywords
WORD_AT_END = re.compile(r"[A-Za-z_0-9.@\[\]]*$")   # not prompt_toolkit's: 3.0.52 returns "set " for "set "
# Values that commands check themselves (the grammar reads them as names); every keyword
# the grammar spells out comes from grammar_keywords().
VALUE_WORDS = ("log", "loglog", "median", "min", "mean", "csv", "extrap", "on", "off")


def typed_word(text: str) -> str:
    """The end of the word being typed at the end of `text` (the input before the cursor),
    which a completion replaces: `colinit.mo` in `show colinit.mo`, empty after a space."""
    return WORD_AT_END.search(text).group()


def candidates(session, text: str) -> list[str] | None:
    """The words that may replace the word being typed at the end of `text` (the input before
    the cursor, all of it: statements before the cursor's are read and left aside), in the
    order they read best: what the grammar allows there, or any known word where the statement
    does not parse; none in a comment. None inside a quoted file name: the caller completes
    paths there."""
    parser = open_grammar("llac.lark", postlex=POSTLEX)
    line = text[text.rfind("\n") + 1:]
    opened = _opened(parser, line)
    if opened is None:
        word = typed_word(text)
        words = _following(session, parser, text[:len(text) - len(word)])
    elif line[opened] == "#":
        return []
    else:
        read = _read(session, parser, text[:len(text) - len(line) + opened])
        if read is None or read[1].previous_type != "FORMULA":
            return None
        inside = line[opened + 1:]
        word = typed_word(inside)
        words = _formula_words(read[1], inside[:len(inside) - len(word)])
    return [w for w in dict.fromkeys(words) if w.startswith((word, f'"{word}')) and w != word]   # `load m` -> "m.dat"


def _opened(parser, line: str) -> int | None:
    """Where in `line` (the input's last line) a comment or a string left open begins; None
    when the line ends in neither. Strings are the grammar's STRING, so a `#` or quote inside
    a closed one counts for nothing."""
    string = parser.get_terminal("STRING").pattern.to_regexp()
    for match in re.finditer(f"{string}|[\"'#]", line):
        if len(match.group()) == 1:     # a quote that no STRING closes, or a comment's `#`
            return match.start()
    return None


def _read(session, parser, before: str):
    """The interactive parser after `before` and the statement `before` ends in (a _Context);
    when the input does not parse, its last statement alone (after the last `;` or line
    break: an earlier mistake does not matter here); None when neither parses."""
    for source in (before, re.split(r"[;\n]", before)[-1]):
        try:
            interactive = parser.parse_interactive(source)
            tokens = list(interactive.iter_parse())
        except LarkError:
            continue
        start = max((i + 1 for i, t in enumerate(tokens) if t.type in SEPARATORS), default=0)
        return interactive, _Context(session, tokens[start:])
    return None


def _following(session, parser, before: str) -> list[str]:
    """Every word the grammar takes after `before`, from the grammar or the session (any
    known word when `before` does not parse)."""
    read = _read(session, parser, before)
    if read is None:
        return [*session.objects, *session.columns(), *grammar_keywords(), *VALUE_WORDS]
    interactive, context = read
    literals = {t.name: t.pattern.value for t in parser.terminals if isinstance(t.pattern, PatternStr)}
    choices = {t.name: ALTERNATIVES.fullmatch(t.pattern.value)[1].split("|") for t in parser.terminals
               if isinstance(t.pattern, PatternRE) and ALTERNATIVES.fullmatch(t.pattern.value)}
    used = set(context.args) if context.command in ("plot", "timeline") else set()   # each option once
    words = []
    for terminal in _accepted(interactive, {t.name for t in parser.terminals}):
        if terminal in NAME_SLOTS:
            words += context.objects()
        elif terminal == "formula__NAME":
            words += _with_functions(context.columns())
        elif terminal == "LOGSCALE":            # one scale per plot
            words += PLOT_SCALES if not used & set(PLOT_SCALES) else ()
        elif terminal == "STRING" and context.command == "load":
            words += _data_files()
        elif literals.get(terminal, "").isalpha() and literals[terminal] not in used:
            words.append(literals[terminal])
        elif terminal in choices:       # a terminal of keywords, `"list" | "show" | "compare"`
            words += sorted(choices[terminal])
    return words


def _formula_words(context, before: str) -> list[str]:
    """Names for the formula string being typed after `formula` (`before`: the formula up to
    the word): the variables of the experiment it is for and the functions, where
    formula.lark takes a name next (or the formula so far does not parse)."""
    try:
        interactive = open_grammar("formula.lark", start="formula").parse_interactive(before)
        interactive.exhaust_lexer()
        if "NAME" not in interactive.accepts():
            return []
    except LarkError:
        pass
    return _with_functions(context.formula_variables())


def _with_functions(names) -> list[str]:
    """`names` (columns) and then the functions an expression or formula may call, as `log(`."""
    return [*names, *(f"{f}(" for f in FUNCTIONS)]


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
        self.previous_type = self.tokens[-1].type if self.tokens else ""

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
        if self.command in ("predict", "obsp", "timeline") and "with" in args and self.previous in ("with", ","):
            offered = ("g", "L") if self.command == "predict" else ("g", "L", "o")
            return [f"{p}=" for p in offered if p not in args[args.index("with"):]]
        if self.previous == "on" and self.command in ("predict", "obsp", "timeline") or self.command == "machine" and args \
                and args[0] in ("show", "compare", "mountain", "bsp", "export"):
            return _machine_names()
        if self.command == "drop" and args:
            return self.constants(args[0])
        if args[:1] == ["with"]:            # NAME = EXPERIMENT with COLUMN = EXPR, ...
            return [f"{c}=" for c in self.columns()]
        if self.previous == "as" or self.command == "rename" and args:   # a new name, or export's format
            return list(EXPORT_FORMATS) if self.command == "export" and args[0] in experiments else []
        if self.command == "obsp":
            return list(session.supersteps)
        if self.command == "timeline":
            return self.run_selectors() if args else [*experiments, *session.supersteps]
        if self.command == "predict" and args and self.previous != "at":
            given = {args[i - 1] for i, a in enumerate(args) if a == "=" and i}
            return [f"{v}=" for v in self.variables(args[0]) if v not in given]
        if self.command in ("fit", "merge", "aggregate", "suggest", "balance", "comm") or self.previous == "at":
            return experiments
        return everything

    def variables(self, name: str) -> list[str]:
        """The formula variables of the object called `name` (an experiment or a model)."""
        obj = self.session.objects.get(name)
        return list(obj.formula.variables) if obj is not None else []

    def constants(self, name: str) -> list[str]:
        """`drop NAME ` takes the constants of NAME's formula, each once."""
        obj = self.session.objects.get(name)
        given = set("".join(self.args[1:]).split(","))
        return [c for c in obj.formula.constants if c not in given] if obj is not None else []

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

    def formula_variables(self) -> list[str]:
        """The variables a formula string may use: the columns of the experiment the statement
        names first that are program variables (none known for `load`'s formula)."""
        obj = self.session.objects.get(self.command)
        return list(obj.variable_columns) if isinstance(obj, Experiment) else []


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
