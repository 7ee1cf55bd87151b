"""Runs the examples in public docstrings and in README.md as doctests."""

import doctest
import importlib
import pathlib
import pkgutil

import pytest

import ember

ROOT = pathlib.Path(__file__).resolve().parents[1]
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def _modules():
    names = []
    for package in ("ember.frontend", "ember.dialects.ember"):
        pkg = importlib.import_module(package)
        names += [m.name for m in pkgutil.walk_packages(pkg.__path__, f"{package}.")]
    return sorted(names)


@pytest.mark.parametrize("name", _modules())
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=FLAGS, extraglobs={"em": ember})
    assert result.failed == 0


def test_readme_examples():
    result = doctest.testfile(str(ROOT / "README.md"), module_relative=False, optionflags=FLAGS)
    assert result.failed == 0
    assert result.attempted >= 3
