"""The docstring examples of em.data's modules (tests/test_doctests.py covers frontend/ and
dialects/ only)."""

import doctest
import importlib
import pkgutil

import pytest

import ember
import ember.runtime.data

MODULES = ["ember.data"] + sorted(
    m.name for m in pkgutil.iter_modules(ember.runtime.data.__path__, "ember.runtime.data."))


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    result = doctest.testmod(importlib.import_module(name), optionflags=flags,
                             extraglobs={"em": ember})
    assert result.failed == 0


def test_the_examples_exist():
    from ember.runtime.data import options, readers
    assert ">>>" in readers.TextLineDataset.__doc__ and ">>>" in readers.RecordDataset.__doc__
    assert ">>>" in options.Options.__doc__
