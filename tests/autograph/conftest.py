"""The AutoGraph tests: programs.py is imported from this folder, and everything must compile
(a fallback to the reference interpreter is an error)."""

import os
import sys

import pytest

import ember as em

sys.path.insert(0, os.path.dirname(__file__))


@pytest.fixture(autouse=True)
def no_fallback():
    previous = em.config.get_fallback()
    em.config.set_fallback("error")
    yield
    em.config.set_fallback(previous)
