"""Random dynamic programs (dynamic_gen.py) run three ways and compared: eagerly, on the
interpreter (`em.function(..., jit_compile=False)`) and compiled, where a fallback to the
interpreter is itself a failure (`em.config.set_fallback("error")`). Values and errors are
compared as program_fuzz.py compares them (same classes; values within its tolerances)."""

from __future__ import annotations

import warnings

import numpy as np

import ember as em
import dynamic_gen
import program_fuzz
from pool import EXPECTED, MISMATCH, OK, Outcome


def generate(count: int, seed: int = 0) -> list[dict]:
    return [{"seed": seed + i, "source": dynamic_gen.generate(seed + i)} for i in range(count)]


def describe(item: dict) -> dict:
    return program_fuzz.describe(item)


def run_one(item: dict) -> Outcome:
    previous = em.config.get_fallback()
    em.config.set_fallback("error")
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            eager = program_fuzz._execute(item, compiled=False)
            interpreted = program_fuzz._execute(item, compiled=True, jit_compile=False)
            compiled = program_fuzz._execute(item, compiled=True)
    finally:
        em.config.set_fallback(previous)
    if isinstance(compiled.error, em.errors.InterpreterFallbackError):
        return Outcome(MISMATCH, f"compiled fell back:\n{compiled.trace}",
                       f"fallback: {str(compiled.error).splitlines()[0][:150]}")
    for mode, run in (("interpreter", interpreted), ("compiled", compiled)):
        outcome = program_fuzz._classify(eager, run, eager.exact, eager.variables_exact)
        if outcome.status not in (OK, EXPECTED):
            outcome.key = f"{mode}: {outcome.key}"
            return outcome
    return program_fuzz._classify(eager, compiled, eager.exact, eager.variables_exact)
