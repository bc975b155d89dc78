"""The layers of `call` (issue 9): its modules import each other without a cycle,
function-local imports included (lexer -> pragmas -> check -> generate -> build -> launch ->
run -> cli), and only the command line (with its progress display, and the BSP probe's
standalone entry) prints."""
import ast
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

import call

PACKAGE = Path(call.__file__).parent


def call_imports() -> dict[str, set[str]]:
    """For each module of call, the modules of call it imports anywhere in its text."""
    modules = {path.stem: path for path in PACKAGE.glob("*.py")}
    graph = {}
    for name, path in modules.items():
        found = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module == "call":
                found.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("call."):
                found.add(node.module.split(".")[1])
            elif isinstance(node, ast.Import):
                found.update(a.name.split(".")[1] for a in node.names if a.name.startswith("call."))
        graph[name] = (found & modules.keys()) - {name}
    return graph


def test_call_has_no_import_cycle():
    try:
        order = list(TopologicalSorter(call_imports()).static_order())
    except CycleError as err:
        raise AssertionError(f"import cycle in call: {' -> '.join(err.args[1])}") from None
    assert order.index("build") < order.index("run") < order.index("cli")


def test_the_run_loop_is_below_the_command_line_only():
    importers = sorted(name for name, imported in call_imports().items() if "run" in imported)
    assert importers == ["cli"]


def test_only_the_command_line_and_its_progress_display_print():
    printing = set()
    for path in PACKAGE.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print" \
                    or isinstance(node, ast.Attribute) and node.attr in ("stdout", "stderr") \
                    and isinstance(node.value, ast.Name) and node.value.id == "sys":
                printing.add(path.stem)
    # probe_bsp: its standalone entry `python -m call.probe_bsp` (issue 11) prints its table
    assert printing == {"cli", "progress", "probe_bsp"}
