"""The shared core `grammar/` (package `cll_grammar`) sits below both tools: it imports
neither `call` nor `llac`, and `call` never imports `llac` (function-local imports included)."""
import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def imported_packages(folder: str) -> dict[str, set[str]]:
    """Map each module file under `folder` to the top-level packages it imports anywhere
    (module level or inside functions)."""
    found = {}
    for path in sorted((ROOT / folder).rglob("*.py")):
        tops = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                tops.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                tops.add(node.module.split(".")[0])
        found[str(path.relative_to(ROOT))] = tops
    return found


def test_call_imports_nothing_from_llac():
    offenders = {path: tops for path, tops in imported_packages("call").items() if "llac" in tops}
    assert offenders == {}


def test_core_imports_neither_tool():
    offenders = {path: tops & {"call", "llac"}
                 for path, tops in imported_packages("grammar").items() if tops & {"call", "llac"}}
    assert offenders == {}
