"""Which parts of a C file the compiler keeps: the arms of `#if`/`#ifdef`/`#ifndef`/`#elif`/
`#else` whose condition call can decide, as gcc will.

A condition is decided when it is an integer constant expression once each macro in it is
known: `#define`d or `#undef`ined earlier in the file's kept code, or given with `-D`/`-U`
in the compiler flags (`call run --cflags`, `call cc`'s arguments, `call check --cflags`).
`#if 0`, `#ifdef X` with X given by -DX or defined above, `#if defined(X) && N > 1` are, and
so are the compiler's identity macros (`#ifdef __GNUC__`, `#if defined(_MSC_VER)`), taken from
the compiler call builds with (`compiler_macros`).
The pragmas and code of an arm the compiler drops are not checked (nor translated: the
compiler never sees them). A condition on a macro call cannot know (one that a header may
define, such as `_OPENMP`) is undecided: all its arms count, as if each were kept.
"""
from __future__ import annotations

import functools
import re
import subprocess
from dataclasses import dataclass

from call.cexpr import truth
from call.clex import CodeToken, Directive

_WORD = re.compile(r"[A-Za-z_]\w*")


@dataclass(frozen=True)
class Undecided:
    """A conditional group whose condition call cannot decide: every arm counts."""
    line: int        # its `#if`/`#ifdef`/`#ifndef`
    end: int         # its `#endif` (the file's last line if none)
    text: str        # `#ifdef NEVER`


def macros_of(flags: list[str]) -> dict[str, str | None]:
    """The macros `-D NAME[=VALUE]` defines (value '1' without one) and `-U NAME` undefines
    (None) in compiler flags, the last word winning."""
    macros: dict[str, str | None] = {}
    words = iter(flags)
    for word in words:
        if word in ("-D", "-U"):
            word += next(words, "")
        if word.startswith("-D") and len(word) > 2:
            name, _, value = word[2:].partition("=")
            macros[name] = value if "=" in word else "1"
        elif word.startswith("-U") and len(word) > 2:
            macros[word[2:]] = None
    return macros


# The compiler's own macros that call takes as the compiler has them (compiler_macros): which
# compiler it is, the platform, the sizes of the types; none depends on what a file includes
# or on optimisation flags
COMPILER_IDENTITY = re.compile(r"__(GNUC|GNUC_MINOR|GNUC_PATCHLEVEL|clang|clang_major|clang_minor|"
                               r"STDC|STDC_HOSTED|STDC_VERSION|linux|unix|x86_64|i386|aarch64|arm|LP64|"
                               r"ILP32|CHAR_BIT|SIZEOF_\w+|BYTE_ORDER|ORDER_\w+_ENDIAN)__")
# other compilers' and platforms' identity macros: undefined when the compiler does not define them
OTHER_COMPILERS = ("__clang__", "__INTEL_COMPILER", "__INTEL_LLVM_COMPILER", "__NVCOMPILER", "__PGI",
                   "_MSC_VER", "_WIN32", "_WIN64", "__APPLE__", "__MINGW32__", "__CYGWIN__")
TARGET_FLAGS = ("-m", "-std=", "-ansi")   # flags that change those macros (-m32, -std=c99, -ansi)


@functools.lru_cache(maxsize=16)
def compiler_macros(compiler: tuple[str, ...], flags: tuple[str, ...] = ()) -> dict[str, str | None]:
    """The macros that identify `compiler` and its target, as it predefines them with the
    target `flags` (`cc -dM -E`, COMPILER_IDENTITY), and the other compilers' identity macros
    it does not define (None): so that `#ifdef __GNUC__` / `#else` is decided as the compiler
    decides it. Empty when the compiler cannot be asked (call then reads every arm)."""
    kept = tuple(f for f in flags if f.startswith(TARGET_FLAGS))
    try:
        done = subprocess.run([*compiler, *kept, "-dM", "-E", "-x", "c", "-"], stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.SubprocessError):
        return {}
    if done.returncode:
        return {}
    defined = dict(re.findall(r"(?m)^#define (\w+) ?(.*)$", done.stdout))
    known: dict[str, str | None] = {n: v for n, v in defined.items() if COMPILER_IDENTITY.fullmatch(n)}
    return {**known, **{n: None for n in OTHER_COMPILERS if n not in defined}}


@dataclass
class _Group:
    """An open `#if` ... `#endif` group: whether its current arm is kept (`live`), whether an
    arm known true came before (`taken`), and where its first undecided condition stands."""
    live: bool
    taken: bool
    undecided: Undecided | None = None


def kept(stream: list[CodeToken | Directive], lines: list[str],
         macros: dict[str, str | None]) -> tuple[list[CodeToken | Directive], list[Undecided]]:
    """The items of the lexed file the compiler keeps (those in a dropped arm left out), and
    the undecided conditional groups. `macros`: known macros (macros_of), None undefined;
    the file's own `#define`/`#undef` lines update a copy."""
    known = dict(macros)
    out, undecided = [], []
    groups: list[_Group] = []
    for item in stream:
        live = all(g.live for g in groups)
        if isinstance(item, Directive) and item.namespace is None:
            text = _text(item, lines)
            word, rest = (text.split(None, 1) + ["", ""])[:2]
            parent = all(g.live for g in groups[:-1 if word in ("elif", "else") else None])
            if word in ("if", "ifdef", "ifndef"):
                groups.append(_Group(False, False))
            if word in ("if", "ifdef", "ifndef", "elif", "else") and groups:
                group = groups[-1]
                test = "if" if word == "elif" else word
                value = True if word == "else" else _decide(test, rest, known) if parent else False
                group.live = parent and not group.taken and value is not False
                if group.live and value is None and group.undecided is None:
                    group.undecided = Undecided(item.line, 0, "#" + text)
                group.taken = group.taken or (value is True and group.undecided is None)
            elif word == "endif" and groups:
                group = groups.pop()
                if group.undecided is not None:
                    undecided.append(Undecided(group.undecided.line, item.line, group.undecided.text))
            elif live and word in ("define", "undef") and _WORD.match(rest):
                name = _WORD.match(rest).group()
                if any(g.undecided for g in groups):   # defined or not: call cannot tell
                    known.pop(name, None)
                else:
                    known[name] = _value(rest[len(name):]) if word == "define" else None
        if live:
            out.append(item)
    undecided += [Undecided(g.undecided.line, len(lines), g.undecided.text)
                  for g in groups if g.undecided is not None]
    return out, undecided


def _text(directive: Directive, lines: list[str]) -> str:
    """A preprocessor line's text after `#`, continuation lines joined, comments blanked."""
    text = "\n".join(lines[directive.line - 1:directive.last_line])
    text = re.sub(r"\\\r?\n", "", text)
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//.*", "", text)
    text = text.strip()
    return text[2 if text.startswith("%:") else 1:].strip()   # `#if` or the digraph `%:if`


def _value(definition: str) -> str:
    """The replacement text of `#define NAME...` (a function-like macro: not a value)."""
    return "(" if definition.startswith("(") else definition.strip() or ""


def _decide(word: str, rest: str, known: dict[str, str | None]) -> bool | None:
    """The truth of `#if REST` / `#ifdef NAME` / `#ifndef NAME`, None if undecided."""
    if word != "if":
        name = _WORD.match(rest.strip())
        if not name or name.group() not in known:
            return None
        return (known[name.group()] is not None) == (word == "ifdef")
    return _evaluate(rest, known)


_DEFINED = re.compile(r"\bdefined\s*(\(\s*([A-Za-z_]\w*)\s*\)|([A-Za-z_]\w*))")


def _evaluate(expression: str, known: dict[str, str | None]) -> bool | None:
    """An `#if` expression's truth when it is an integer constant expression whose macros
    are known, or whose value is the same whether each unknown one in `defined` is defined or
    not (`defined(X) && 0`); None otherwise. The arithmetic is C's (call/cexpr.py)."""
    unknown = sorted({m.group(2) or m.group(3) for m in _DEFINED.finditer(expression)} - known.keys())
    if unknown and len(unknown) <= 4:
        values = {_evaluate(expression, {**known, **dict(zip(unknown, choice))})
                  for choice in _choices(len(unknown))}
        return values.pop() if len(values) == 1 else None   # None among them: undecided too
    expanded = _expand(expression, known, frozenset())
    return None if expanded is None else truth(expanded)


# a preprocessing number (digits, letters of a suffix or exponent), a name, a character
# constant, or any other character
_PP_TOKEN = re.compile(r"(\.?[0-9](?:[\w.]|[eEpP][-+])*)|([A-Za-z_]\w*)|([LuU]?'(?:\\.|[^'\\\n])*')|(\s+|.)",
                       re.S)


def _expand(text: str, known: dict[str, str | None], active: frozenset[str]) -> str | None:
    """`text` with `defined X` replaced by 1 or 0 and every macro by its replacement text,
    rescanned as the preprocessor does (no parentheses added: `#define A 1+2` makes `A*2`
    5); a macro undefined (None) is 0. None when a name is not known, is a function-like
    macro, or refers back to itself (what gcc makes of those depends on more than call knows)."""
    text = _DEFINED.sub(lambda m: _defined(m.group(2) or m.group(3), known), text)
    if "defined_unknown_macro_" in text or len(active) > 32:
        return None
    out = []
    for match in _PP_TOKEN.finditer(text):
        name = match.group(2)
        if name is None:
            out.append(match.group())
            continue
        if name not in known or name in active or known[name] in ("(", _SOME_VALUE):
            return None
        replacement = "0" if known[name] is None else _expand(known[name], known, active | {name})
        if replacement is None:
            return None
        out.append(f" {replacement} ")
    return "".join(out)


# a macro taken as defined with a value call does not know: `defined(X)` is 1, X itself undecided
_SOME_VALUE = "\x00"


def _choices(count: int) -> list[tuple[str | None, ...]]:
    """Every way `count` macros can be defined (with a value not known) or not (None)."""
    return [tuple(_SOME_VALUE if bits >> i & 1 else None for i in range(count)) for bits in range(2 ** count)]


def _defined(name: str, known: dict[str, str | None]) -> str:
    """`defined NAME` as 1 or 0, or the name itself (unknown, so the whole is undecided)."""
    if name not in known:
        return "defined_unknown_macro_"
    return "1" if known[name] is not None else "0"
