"""docs/llac-language.md carries the registry's command reference, current and complete."""
from pathlib import Path

from llac.commands import ordered
from llac.commands.helptext import reference_markdown

DOC = Path(__file__).resolve().parent.parent / "docs" / "llac-language.md"


def test_command_reference_in_the_doc_is_generated_from_the_registry():
    text = DOC.read_text()
    section = text.split("<!-- commands:start -->\n", 1)[1].split("<!-- commands:end -->", 1)[0]
    assert section.strip() == reference_markdown().strip()


def test_every_registered_command_has_syntax_help_and_examples_in_the_doc():
    text = DOC.read_text()
    for spec in ordered():
        assert f"### `{spec.name}`" in text and spec.syntax in text
        assert spec.examples and spec.help.endswith(".")


def test_every_fit_setting_is_documented_in_the_table_and_in_help():
    """A FitSettings field added without documentation fails here."""
    from dataclasses import fields

    from llac.commands import REGISTRY
    from llac.model import FitSettings
    table = DOC.read_text().split("## Settings")[1].split("## Commands")[0]
    for field in fields(FitSettings):
        assert f"`{field.name}`" in table, f"{field.name} missing from the settings table"
        assert field.name in REGISTRY["set"].help, f"{field.name} missing from `help set`"


def test_help_of_every_command_in_the_doc_runs_as_written():
    """Each `### `NAME`` of the reference is what `help NAME` takes (`help =` too)."""
    from llac.render import render
    from llac.session import Session
    for spec in ordered():
        shown = list(Session().execute(f"help {spec.name}"))
        assert shown and spec.syntax in render(shown[0])
