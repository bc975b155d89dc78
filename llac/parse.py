"""Parse llac source text into `llac.ast` statements, with errors in plain words."""
from __future__ import annotations

import math
import re
from decimal import Decimal, localcontext

from lark import Token, Transformer, v_args
from lark.exceptions import UnexpectedCharacters, UnexpectedInput, UnexpectedToken, VisitError
from lark.visitors import merge_transformers

from cll_grammar.formula import TOO_DEEP, ExpressionBuilder, FormulaError, deepest_span, parse_formula
from cll_grammar.grammars import open_grammar
from cll_grammar.span import suggest
from llac import ast
from llac.errors import LlacError

MAX_RANGE = 100_000
# a newline right after one of these does not end the statement (terminal names as Lark gives
# them: `_formula__POWER` is formula.lark's `_POWER`, `**`)
CONTINUE_AFTER = {"PLUS", "MINUS", "STAR", "SLASH", "CIRCUMFLEX", "_formula__POWER", "_RANGE", "COMMA",
                  "EQUAL", "AND", "OR", "NOT", "formula__COMPARE", "WHERE", "WITH", "STEP"}
WORDS = {"OBJECT": "a name", "VARIABLE": "a variable", "VARIABLE_IS": "a variable", "STRING": "a quoted string", "VALUE": "a number",
         "_NL": "the end of the line", "SEMICOLON": "';'", "$END": "the end of the input",
         "formula__NAME": "a column name", "formula__NUMBER": "a number",
         "LPAR": "'('", "RPAR": "')'", "LSQB": "'['", "RSQB": "']'", "EQUAL": "'='",
         "COMMA": "','", "PERCENT": "'%'", "LOGSCALE": ("'log'", "'loglog'"), "_RANGE": "'..'",
         "formula__MEMBER_OP": ("'.'", "'->'"),
         "MACHINE_VIEW": ("'list'", "'show'", "'compare'"), "MACHINE_PLOT": ("'mountain'", "'bsp'")}   # a tuple: several words


class ContinuationLexer:
    """Lark post-lexer: drops newlines inside brackets and after a trailing operator or comma."""
    always_accept = ("_NL",)

    def process(self, stream):
        """Yield the tokens of `stream`, leaving out the newlines that do not end a statement."""
        depth, previous = 0, None
        for token in stream:
            if token.type in ("LPAR", "LSQB"):
                depth += 1
            elif token.type in ("RPAR", "RSQB"):
                depth = max(0, depth - 1)
            elif token.type == "_NL" and (depth or previous in CONTINUE_AFTER):
                continue
            previous = token.type
            yield token


POSTLEX = ContinuationLexer()


def span_of(item) -> ast.Span:
    """The span of a lark Token or tree meta."""
    return ast.Span.of(item)


def _name(token: Token) -> ast.Name:
    return ast.Name(str(token), span_of(token))


def _string(token: Token) -> str:
    return str(token)[1:-1]


def _path(token: Token) -> str:
    """A file name the statement reads or writes; an empty one is an error at the token (the
    system would read it as the current folder, or refuse it with a bare errno)."""
    path = _string(token)
    if not path:
        raise LlacError("the file name is empty: name a file between the quotes", span_of(token))
    return path


def _number(token: Token) -> float:
    """The value of a number token; one beyond the float range (1e400) is an error at the token."""
    value = float(token)
    if not math.isfinite(value):
        raise LlacError(f"the number {token} is beyond the floating-point range (±1.8e308)", span_of(token))
    return value


def _whole(token: Token) -> int:
    """A count or an index: a whole number >= 0 (`1e400`, `-1` or `2.5` is an error at the token)."""
    value = _number(token)
    if not (0 <= value < 2**63 and value == int(value)):
        raise LlacError(f"expected a whole number >= 0, not {token}", span_of(token))
    return int(value)


@v_args(meta=True)
class StatementBuilder(Transformer):
    """Builds `llac.ast` statements from llac.lark trees; executes nothing."""

    def start(self, meta, children):
        return [c for c in children if isinstance(c, ast.Statement)]

    def target(self, meta, children):
        return _name(children[0])

    def assign(self, meta, children):
        return ast.Assign(children[0], children[1], span=span_of(meta))

    def load(self, meta, children):
        strings = [_path(c) for c in children if isinstance(c, Token)]
        options = dict(c for c in children if isinstance(c, tuple))
        formula = options.get("formula")
        return ast.Load(tuple(strings), options.get("as"), _string(formula) if formula else None,
                        span_of(formula) if formula else None, span=span_of(meta))

    def load_as(self, meta, children):
        return ("as", _name(children[0]))

    def load_formula(self, meta, children):
        return ("formula", children[0])

    def list_(self, meta, children):
        return ast.List(span=span_of(meta))

    def show(self, meta, children):
        limit = _whole(children[1]) if len(children) > 1 else None
        return ast.Show(_name(children[0]), limit, span=span_of(meta))

    def describe(self, meta, children):
        return ast.Describe(_name(children[0]), span=span_of(meta))

    def rename(self, meta, children):
        return ast.Rename(_name(children[0]), _name(children[1]), span=span_of(meta))

    def delete(self, meta, children):
        return ast.Delete(tuple(map(_name, children)), span=span_of(meta))

    def set_(self, meta, children):
        if not children:
            return ast.Set(span=span_of(meta))
        text, value_span = children[1]
        return ast.Set(_name(children[0]), text, value_span, span=span_of(meta))

    def setting_value(self, meta, children):
        return "".join(map(str, children)), span_of(meta)

    def predict(self, meta, children):
        parameters = children.pop()[1] if isinstance(children[-1], tuple) else ()
        machine = children.pop() if isinstance(children[-1], ast.Name) else None
        return ast.Predict(_name(children[0]), tuple(children[1:]), machine, parameters, span=span_of(meta))

    def what_if(self, meta, children):
        names = [name for name, _ in children]
        for name, value in children:
            if name not in ("g", "L", "o"):
                raise LlacError(f"with: {name!r} is not a machine parameter (g, L or o)", span_of(meta))
            if names.count(name) > 1:
                raise LlacError(f"with: {name} is given twice", span_of(meta))
            if name == "o" and not value >= 0:
                raise LlacError("with: o must be 0 or more (seconds per message)", span_of(meta))
            if name != "o" and not value > 0:
                raise LlacError(f"with: {name} must be positive (seconds per byte for g, "
                                f"seconds for L)", span_of(meta))
        return ("what_if", tuple(children))

    def parameter(self, meta, children):
        return (str(children[0]), _number(children[1]))

    def on_machine(self, meta, children):
        return _name(children[0])

    def predict_last(self, meta, children):
        return ast.PredictLast(span=span_of(meta))

    def fit_all(self, meta, children):
        return ast.FitAll(span=span_of(meta))

    def report(self, meta, children):
        return ast.Report(span=span_of(meta))

    def suggest(self, meta, children):
        return ast.Suggest(_name(children[0]), span=span_of(meta))

    def predict_at(self, meta, children):
        machine = children[2] if len(children) > 2 else None
        return ast.PredictAt(_name(children[0]), _name(children[1]), machine, span=span_of(meta))

    def predict_table(self, meta, children):
        obj, data, procs = map(_name, children)
        return ast.PredictTable(obj, data, procs, span=span_of(meta))

    def balance(self, meta, children):
        return _parallel_report(ast.Balance, meta, children, plot=False)

    def comm(self, meta, children):
        return _parallel_report(ast.Comm, meta, children, plot=False)

    def plot_balance(self, meta, children):
        return _parallel_report(ast.Balance, meta, children, plot=True)

    def plot_comm(self, meta, children):
        return _parallel_report(ast.Comm, meta, children, plot=True)

    def obsp(self, meta, children):
        options = children[1:]
        combine = "sum" if any(isinstance(c, Token) and c.type == "SUM" for c in options) else "max"
        machine = next((c for c in options if isinstance(c, ast.Name)), None)
        parameters = next((c[1] for c in options if isinstance(c, tuple) and c[0] == "what_if"), ())
        data = next((c[1] for c in options if isinstance(c, tuple) and c[0] == "at"), None)
        return ast.Obsp(_name(children[0]), combine, machine, parameters, data, span=span_of(meta))

    def timeline(self, meta, children):
        options, selectors = {}, {}
        for option in children[1:]:
            kind, value = ("machine", option) if isinstance(option, ast.Name) else option
            if kind == "select":
                if value[0].text in selectors:
                    raise LlacError(f"timeline: {value[0].text} is given twice", value[0].span)
                selectors[value[0].text] = value
                continue
            if kind in options:
                raise LlacError(f"timeline option {kind!r} given twice", span_of(meta))
            options[kind] = value
        path, replace = options.pop("to", (None, False))
        return ast.Timeline(_name(children[0]), tuple(selectors.values()), options.get("model", False),
                            options.get("combine", "max"), options.get("machine"),
                            options.get("what_if", ()), path, replace, span=span_of(meta))

    def select(self, meta, children):
        return ("select", (_name(children[0]), _number(children[1])))

    def model_view(self, meta, children):
        return ("model", True)

    def sum_combine(self, meta, children):
        return ("combine", "sum")

    def at_data(self, meta, children):
        return ("at", _name(children[0]))

    def machine(self, meta, children):
        saved = children[-1] if children and isinstance(children[-1], tuple) else None
        children = [c for c in children if c is not None and c is not saved]
        action, names = str(children[0]), tuple(map(_name, children[1:]))
        most = {"list": 0, "show": 1, "mountain": 1, "bsp": 1, "compare": 2}[action]
        least = 2 if action == "compare" else 0
        if not least <= len(names) <= most:
            wanted = {0: "no machine", 1: "at most one machine", 2: "two machines"}[most]
            raise LlacError(f"machine {action} takes {wanted}", span_of(meta))
        path, replace = saved[1] if saved else (None, False)
        return ast.Machine(action, names, path, replace, span=span_of(meta))

    def machine_export(self, meta, children):
        return ast.Machine("export", (_name(children[0]),), _path(children[1]),
                           children[-1].type == "REPLACE", span=span_of(meta))

    def machine_import(self, meta, children):
        return ast.Machine("import", (), _path(children[0]), span=span_of(meta))

    def point(self, meta, children):
        return ast.Point(_name(children[0]), children[1])

    def value_list(self, meta, children):
        # `N=1,000`, `N=2,048`: a list of 1 and 0? A value with a leading zero after a comma
        # is a thousands separator's group, never a size anyone lists
        grouped = next((t for t in children[1:] if re.match(r"0\d", str(t))), None)
        if grouped is not None:
            before = children[children.index(grouped) - 1]
            raise LlacError(f"'{before},{grouped}' would be a list of {_number(before):g} and {_number(grouped):g}: "
                            f"numbers have no thousands separator in llac; write {before}{grouped}", span_of(grouped))
        return tuple(map(_number, children))

    def geometric(self, meta, children):
        start, stop, factor = map(_number, children)
        if start <= 0 or factor <= 1:
            raise LlacError("a range 'A..B *F' needs A > 0 and a factor F > 1", span_of(meta))
        start, stop, factor = map(_decimal, children)
        return _expand(stop, lambda i: start * factor ** i, meta)

    def arithmetic(self, meta, children):
        start, stop = _number(children[0]), _number(children[1])
        step = _number(children[2]) if len(children) > 2 and children[2] is not None else 1.0
        if step <= 0:
            raise LlacError("a range 'A..B step S' needs a step S > 0", span_of(meta))
        start, stop = _decimal(children[0]), _decimal(children[1])
        step = _decimal(children[2]) if len(children) > 2 and children[2] is not None else Decimal(1)
        return _expand(stop, lambda i: start + i * step, meta)

    def plot(self, meta, children):
        options = {}
        for kind, value in children[1:]:
            if kind in options:
                said = (f"two scales ({options[kind]} and {value}): give one, log or loglog"
                        if kind == "scale" else f"option {kind!r} given twice")
                raise LlacError(f"plot: {said}", span_of(meta))
            options[kind] = value
        if "to" in options:
            options["path"], options["replace"] = options.pop("to")
        return ast.Plot(_name(children[0]), span=span_of(meta), **options)

    def vs(self, meta, children):
        return ("vs", _name(children[0]))

    def by(self, meta, children):
        return ("by", _name(children[0]))

    def scale(self, meta, children):
        return ("scale", str(children[0]))

    def residuals(self, meta, children):
        return ("residuals", True)

    def to(self, meta, children):
        return ("to", (_path(children[0]), len(children) > 1))     # STRING [REPLACE]

    def export(self, meta, children):
        replace = children[-1].type == "REPLACE"
        options = children[2:len(children) - replace]
        return ast.Export(_name(children[0]), _path(children[1]), _name(options[0]) if options else None,
                          replace, span=span_of(meta))

    def help(self, meta, children):
        return ast.Help(_name(children[0]) if children else None, span=span_of(meta))

    def help_naming(self, meta, children):
        """`help =`: the command that names a result (NAME = SOURCE)."""
        return ast.Help(ast.Name("=", span_of(meta)), span=span_of(meta))

    # ---- sources
    def copy(self, meta, children):
        return ast.Copy(_name(children[0]), span=span_of(meta))

    def where(self, meta, children):
        return ast.Where(_name(children[0]), children[1], span=span_of(meta))

    def with_(self, meta, children):
        return ast.With(_name(children[0]), tuple(children[1:]), span=span_of(meta))

    def column_def(self, meta, children):
        return (_name(children[0]), children[1])

    def merge(self, meta, children):
        return ast.Merge(_name(children[0]), tuple(map(_name, children[1:])), span=span_of(meta))

    def aggregate(self, meta, children):
        method = _name(children[1]) if len(children) > 1 and children[1] is not None else None
        return ast.Aggregate(_name(children[0]), method, span=span_of(meta))

    def reformulate(self, meta, children):
        return ast.Reformulate(_name(children[0]), _string(children[1]), span_of(children[1]),
                               span=span_of(meta))

    def fit(self, meta, children):
        return ast.Fit(_name(children[0]), span=span_of(meta))

    def drop(self, meta, children):
        return ast.Drop(_name(children[0]), tuple(children[1:]), span=span_of(meta))

    def constant(self, meta, children):
        return (_name(children[0]), _whole(children[1]))


def _parallel_report(kind, meta, children, plot: bool) -> ast.ParallelReport:
    saved = children[-1] if plot and isinstance(children[-1], tuple) else None    # `to "FILE" [replace]`
    by = _name(children[1]) if len(children) > 1 and children[1] is not None and children[1] is not saved else None
    path, replace = saved[1] if saved else (None, False)
    return kind(_name(children[0]), by, plot, path, replace, span=span_of(meta))


def _decimal(token: Token) -> Decimal:
    """A number token's exact decimal value (`0.1` is one tenth, not the double nearest it)."""
    return Decimal(str(token))


def _expand(stop: Decimal, value_at, meta) -> tuple[float, ...]:
    """The values `value_at(0), value_at(1), ...` up to `stop`, in decimal arithmetic on the
    numbers as typed, each made a double once: `0.1..1 step 0.1` is 0.1, 0.2, ..., 0.7, ...,
    1.0 (each value start + i·step, the double nearest that decimal, where adding doubles gave
    0.7999999999999999), and `1..2 step 0.1` ends at 2, never past it."""
    values = []
    with localcontext() as context:
        context.prec = 60
        while (x := value_at(len(values))) <= stop:
            values.append(float(x))
            if len(values) > MAX_RANGE:
                raise LlacError(f"the range has more than {MAX_RANGE} values", span_of(meta))
    if not values:
        raise LlacError("the range is empty: its start is beyond its end", span_of(meta))
    return tuple(values)


def parse(text: str, keywords=()) -> list[ast.Statement]:
    """Parse llac source into statements; raises LlacError (with span) in plain words.

    `keywords` are the command names, used to say 'unknown command' with a suggestion.
    """
    parser = open_grammar("llac.lark", postlex=POSTLEX)
    builder = merge_transformers(StatementBuilder(), formula=ExpressionBuilder())
    tree = None
    try:
        tree = parser.parse(text if text.endswith("\n") else text + "\n")
        return builder.transform(tree)
    except UnexpectedInput as err:
        raise _syntax_error(err, text, keywords) from None
    except VisitError as err:
        if isinstance(err.orig_exc, LlacError):
            raise err.orig_exc from None
        if isinstance(err.orig_exc, FormulaError):   # e.g. an unknown function in `where`
            bad = err.orig_exc
            raise LlacError(bad.message, ast.Span.point(bad.span.line, bad.span.column)) from None
        if isinstance(err.orig_exc, RecursionError):
            raise _too_deep(tree) from None
        raise
    except RecursionError:
        raise _too_deep(tree) from None


def _too_deep(tree) -> LlacError:
    deepest = deepest_span(tree)
    return LlacError(TOO_DEEP, ast.Span.point(deepest.line, deepest.column))


def checked_formula(text: str, span: ast.Span):
    """Parse a formula written in a string, locating its errors inside the string."""
    try:
        return parse_formula(text)
    except FormulaError as err:
        column = span.column + max(err.column, 1)
        raise LlacError(f"bad formula: {err.message}", ast.Span.point(span.line, column)) from None


def grammar_keywords() -> tuple[str, ...]:
    """Every word the llac grammar spells out (`where`, `by`, `balance`, ...), taken from the
    grammar itself so that completion and highlighting cannot fall behind it."""
    from lark.lexer import PatternStr
    parser = open_grammar("llac.lark", postlex=POSTLEX)
    return tuple(sorted({t.pattern.value for t in parser.terminals
                         if isinstance(t.pattern, PatternStr) and t.pattern.value.isalpha()}))


def name_ok(text: str) -> bool:
    """True when `text` is a name statements can write (the grammar's OBJECT terminal), e.g.
    the object name stored in a model file."""
    import re
    pattern = open_grammar("llac.lark", postlex=POSTLEX).get_terminal("OBJECT").pattern.to_regexp()
    return re.fullmatch(pattern, text) is not None


def incomplete(text: str) -> bool:
    """True when `text` stops in the middle of a statement (the REPL then reads another line)."""
    stripped = text.rstrip(" \t")
    if stripped.endswith("\\"):
        return True
    try:
        open_grammar("llac.lark", postlex=POSTLEX).parse(text + "\n")
    except UnexpectedToken as err:
        return err.token.type == "$END"
    except UnexpectedInput:
        return False
    return False


def _syntax_error(err: UnexpectedInput, text: str, keywords) -> LlacError:
    line, column = max(err.line, 1), max(err.column, 1)
    word = _statement_start(text, line, column)
    where = ast.Span(line, column, line, column + 1)
    if word and word[0] not in keywords and not _is_assignment(text, line, word):
        name, wline, wcol = word
        rest = text.splitlines()[wline - 1][wcol - 1 + len(name):].split()
        if rest[:1] and rest[0] in MAKERS:      # `G where N < 5`: a new object needs its name
            return LlacError(f"{name} {rest[0]} ... makes a new object: name it, NAME = {name} {rest[0]} ...",
                             ast.Span(wline, wcol, wline, wcol + len(name)))
        hint = " (a copy is written NAME = OBJECT)" if name == "copy" else suggest(name, keywords)
        return LlacError(f"unknown command {name!r}{hint}; "
                         f"type 'help' for the list of commands", ast.Span(wline, wcol, wline, wcol + len(name)))
    if isinstance(err, UnexpectedToken):
        found = "the end of the line" if err.token.type in ("_NL", "$END") else repr(str(err.token))
        if err.token.type == "$END":
            line, column = _end_position(text)
            where = ast.Span(line, column, line, column + 1)
        elif err.token.type != "_NL":
            where = span_of(err.token)
        hint = (" (a comparison is written ==)" if err.token.type == "EQUAL"
                and "formula__COMPARE" in err.expected else _keyword_hint(str(err.token), err.expected)
                or _option_hint(err, text) or _machine_hint(err, text))
        return LlacError(f"expected {_words(_acceptable(err))}, found {found}{hint}", where)
    if isinstance(err, UnexpectedCharacters):
        char = text[err.pos_in_stream] if err.pos_in_stream < len(text) else ""
        allowed = _words(err.allowed) if err.allowed else "something else"
        return LlacError(f"unexpected {char!r}: expected {allowed}{_character_hint(char, text, err.pos_in_stream)}",
                         where)
    return LlacError("syntax error", where)


MAKERS = ("where", "with", "formula")   # `OBJECT where ...` and the like make an object: `NAME = ...`


def _character_hint(char: str, text: str, position: int) -> str:
    """What a character llac cannot read there probably meant: a string left open, C's `&&`
    and `||`, a letter outside ASCII in a name."""
    if char == '"' and '"' not in text[position + 1:].split("\n", 1)[0]:
        return " (this string is not closed: its '\"' is missing)"
    if char in "&|":
        return f" (write {'and' if char == '&' else 'or'})"
    if char.isalpha() and not char.isascii():
        return " (names are ASCII letters, digits and '_')"
    return ""


def _acceptable(err: UnexpectedToken) -> set[str]:
    """The terminals `err` expected, less the ends of a statement (the end of the line, ';')
    that the parser, trying them (Lark's `accepts`), finds lead only to a later error: the
    state's table alone made `set threshold;` offer "the end of the line", which `set
    threshold` then refused."""
    expected, parser = set(err.expected), err.interactive_parser
    ends = expected & {"_NL", "SEMICOLON", "$END"}
    if parser is None or not ends:
        return expected
    return expected - (ends - set(parser.accepts()))


def _said(terminal: str) -> tuple[str, ...]:
    """How a message names a terminal of the grammar: one or several words (WORDS)."""
    said = WORDS.get(terminal, repr(terminal.lower()))
    return (said,) if isinstance(said, str) else said


def _keyword_hint(found: str, terminals) -> str:
    """' (did you mean 'show'?)' when the word found is a near miss of a keyword expected there
    (`machine shwo`)."""
    keywords = [word for t in terminals for said in _said(t) for word in re.findall(r"'([a-z]+)'", said)]
    return suggest(found, keywords) if found.isidentifier() else ""


def _option_hint(err: UnexpectedToken, text: str) -> str:
    """When only '=' could follow, the word before was read as a `NAME=VALUE` selector: if it
    is a near miss of a word of the grammar (`timeline f modle`), suggest that word."""
    if "EQUAL" not in err.expected or set(err.expected) - {"EQUAL", "_NL", "$END", "SEMICOLON"}:
        return ""
    end = err.token.start_pos if err.token.type not in ("$END",) and err.token.start_pos is not None else len(text)
    words = re.findall(r"[A-Za-z_]\w*", text[:end])
    if words and words[-1] in ("merge", "aggregate", "copy"):       # `merge a, b` without `NAME =`
        return f" ({words[-1]} makes a new object: name it, NAME = {words[-1]} ...)"
    return suggest(words[-1], grammar_keywords()) if words else ""


def _machine_hint(err: UnexpectedToken, text: str) -> str:
    """A number where a `machine` command takes a machine: probe runs are named by their
    machine (`machine compare 1 2` was a bare syntax error)."""
    statement = text[:err.token.start_pos or 0].split(";")[-1].split("\n")[-1].split()
    if statement[:1] != ["machine"] or not re.fullmatch(r"\d+", str(err.token)):
        return ""
    return f" (a probe run is named MACHINE@ID or MACHINE@LABEL, such as MACHINE@{err.token}: `machine list` shows them)"


OPERATORS = {"PLUS", "MINUS", "STAR", "SLASH", "CIRCUMFLEX", "_formula__POWER", "formula__COMPARE",
             "AND", "OR", "NOT"}


def _words(terminals) -> str:
    terminals = set(terminals) - {"COMMENT", "WS_INLINE", "CONTINUATION"}
    if "LPAR" in terminals and "RPAR" not in terminals:
        return "a number, a column name or '('"
    words = (["an operator"] if terminals & OPERATORS else []) + [   # a terminal's words in their order
        word for said in sorted({_said(t) for t in terminals - OPERATORS}) for word in said]
    if len(words) > 8:
        words = words[:8] + ["..."]
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " or " + words[-1]


def _statement_start(text: str, line: int, column: int):
    """The first word of the statement that holds (line, column), with its position."""
    lines = text.splitlines() or [""]
    row = min(line, len(lines)) - 1
    before = lines[row][:column - 1]
    cut = before.rfind(";")
    segment = lines[row][cut + 1:]
    stripped = segment.lstrip()
    word = re.match(r"[A-Za-z_][\w.@]*", stripped)     # the word itself: `show;` is `show`
    if word is None:
        return None
    word = word.group()
    return word, row + 1, cut + 2 + len(segment) - len(stripped)


def _is_assignment(text: str, line: int, word) -> bool:
    rest = text.splitlines()[word[1] - 1][word[2] - 1 + len(word[0]):].lstrip()
    return rest.startswith("=")


def _end_position(text: str) -> tuple[int, int]:
    lines = text.rstrip("\n").splitlines() or [""]
    return len(lines), len(lines[-1]) + 1
