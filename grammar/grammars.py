"""Load the Lark grammars that live beside this module in the package `cll_grammar`."""
import os
import sys
from functools import lru_cache
from pathlib import Path

import lark
from lark import Lark


@lru_cache(maxsize=None)
def open_grammar(filename: str, start: str = "start", **options) -> Lark:
    """Return an LALR parser for `grammar/<filename>` with positions, cached per (file, start).

    The `.lark` files are package data of `cll_grammar` (the folder `grammar/`), read through
    the package so that an installed wheel and an editable checkout both work. Building
    a parser table takes 0.1-0.3 s, so Lark keeps the built parser in the user's cache
    directory (`cache_path`) and rebuilds it only when the grammar or Lark changes.
    """
    options = {"parser": "lalr", "propagate_positions": True, "maybe_placeholders": False,
               "start": start, "cache": cache_path(filename, start), **options}
    return Lark.open_from_package(__package__, filename, ("",), **options)


def cache_path(filename: str, start: str) -> str | bool:
    """Where Lark keeps the built parser of `filename` from rule `start`:
    $XDG_CACHE_HOME/llac (default ~/.cache/llac), a directory only this user writes (Lark's
    own default, the shared temporary directory, would load pickles others could plant).
    Lark checks the grammar's hash on load and rebuilds a stale or damaged file.
    False (no cache) when the directory cannot be made."""
    root = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    directory = Path(root) / "llac"
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError:
        return False
    python = "%d.%d" % sys.version_info[:2]
    return str(directory / f"{Path(filename).stem}-{start}-lark{lark.__version__}-py{python}.parser")
