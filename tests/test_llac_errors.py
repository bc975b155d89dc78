"""Domain errors (data readers, formulas, fits, parallel tables) become LlacError in one place,
the session; the data readers' errors share one base class, InputError (issue 9, item 5)."""
import dataclasses

import pytest

from llac import ast
from llac.commands import HANDLERS, load_all
from llac.csvio import CsvError
from llac.errors import InputError, LlacError
from llac.extrap import ExtrapError
from llac.modelio import ModelFileError
from llac.session import DOMAIN_ERRORS, Session
from llac.trace import TraceError


def test_every_reader_error_is_an_input_error_and_none_is_another_readers():
    for kind in (TraceError, CsvError, ExtrapError, ModelFileError):
        assert issubclass(kind, InputError)
    assert not issubclass(CsvError, TraceError) and not issubclass(ExtrapError, TraceError)


@pytest.mark.parametrize("kind", DOMAIN_ERRORS)
def test_the_session_turns_a_domain_error_into_a_located_llac_error(monkeypatch, kind):
    load_all()

    def failing(session, statement):
        raise kind("the data do not allow it")
    monkeypatch.setitem(HANDLERS, ast.List, dataclasses.replace(HANDLERS[ast.List], handler=failing))
    with pytest.raises(LlacError) as err:
        list(Session().execute("\n  list"))
    assert err.value.message == "the data do not allow it"
    assert (err.value.span.line, err.value.span.column) == (2, 3)
