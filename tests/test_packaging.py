"""The installed distribution carries every Python package of the source tree."""
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_every_python_package_is_listed_in_pyproject():
    """A subpackage missing from [tool.setuptools] packages works in a checkout but not in
    a wheel (`pip install .`): list them all."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(config["packages"])
    on_disk = {".".join(init.parent.relative_to(ROOT).parts)
               for top in ("llac", "call") for init in (ROOT / top).rglob("__init__.py")}
    assert on_disk <= listed, f"not in pyproject's packages: {sorted(on_disk - listed)}"
    assert config["package-dir"]["cll_grammar"] == "grammar"
    assert (ROOT / "grammar" / "__init__.py").exists()


def test_the_shared_core_ships_its_python_modules_and_grammars(tmp_path):
    """`call` and `llac` import `cll_grammar.formula`, `.grammars` and `.span`: a wheel must
    carry them beside the .lark files (build_py lays out what the wheel holds)."""
    subprocess.run([sys.executable, "setup.py", "-q", "build_py", "-d", str(tmp_path)], cwd=ROOT,
                   check=True, capture_output=True)
    shipped = {p.name for p in (tmp_path / "cll_grammar").iterdir()}
    expected = {p.name for p in (ROOT / "grammar").iterdir() if p.suffix in (".py", ".lark")}
    assert expected <= shipped and {"formula.py", "grammars.py", "span.py"} <= shipped
