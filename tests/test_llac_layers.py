"""The llac package has no import cycle, function-local imports included (issue 9): every module
can be read, and changed, above the ones it imports."""
import ast
from pathlib import Path

LLAC = Path(__file__).resolve().parent.parent / "llac"


def module_name(path: Path) -> str:
    """'llac.commands.data' for llac/commands/data.py, 'llac.commands' for its __init__.py."""
    parts = ["llac", *path.relative_to(LLAC).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path, modules: set[str]) -> set[str]:
    """The llac modules that `path` imports anywhere in its body (llac imports absolutely; a
    module's own parent package is left out: importing a submodule runs it anyway)."""
    name = module_name(path)
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            targets = [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
        else:
            continue
        for target in targets:
            while target and target not in modules:
                target = target.rpartition(".")[0]
            if target and target != name and not name.startswith(target + "."):
                found.add(target)
    return found


def test_llac_has_no_import_cycle():
    paths = {module_name(p): p for p in LLAC.rglob("*.py")}
    graph = {name: imports(path, set(paths)) for name, path in paths.items()}
    done, path = set(), []

    def visit(name):
        if name in path:
            raise AssertionError("import cycle: " + " -> ".join(path[path.index(name):] + [name]))
        if name in done:
            return
        path.append(name)
        for target in sorted(graph[name]):
            visit(target)
        path.pop()
        done.add(name)
    for name in sorted(graph):
        visit(name)
