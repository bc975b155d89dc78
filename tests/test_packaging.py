"""The installed distribution carries every Python package of the source tree."""
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
