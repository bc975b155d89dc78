"""Load the Lark grammars in `grammar/`, from the installed package or from a source checkout."""
import importlib.util
from functools import lru_cache
from pathlib import Path

from lark import Lark

GRAMMAR_PACKAGE = "cll_grammar"
CHECKOUT_GRAMMAR_DIR = Path(__file__).resolve().parent.parent / "grammar"


@lru_cache(maxsize=None)
def open_grammar(filename: str, start: str = "start", **options) -> Lark:
    """Return an LALR parser for `grammar/<filename>` with positions, cached per (file, start).

    The grammars ship inside the wheel as the package `cll_grammar`; a source checkout that
    was never installed falls back to its top-level `grammar/` folder, so both work.
    """
    options = {"parser": "lalr", "propagate_positions": True, "maybe_placeholders": False,
               "start": start, **options}
    if importlib.util.find_spec(GRAMMAR_PACKAGE) is not None:
        return Lark.open_from_package(GRAMMAR_PACKAGE, filename, ("",), **options)
    return Lark.open(str(CHECKOUT_GRAMMAR_DIR / filename), **options)
