"""The compiled-vs-eager differential of gradients: random programs of grad_gen.py (a
forward program under an `em.GradientTape`, its outputs and gradients returned), run by
program_fuzz.py's runner: eagerly, then through `em.function` with the interpreter fallback
turned into an error, values and error classes compared. `em.errors.NoGradientError` (a
gradient asked through an op with no rule) is a user-facing error here: both modes must
raise it alike. A pool.py task: an abort or hang in one program is counted and the run goes
on."""

from __future__ import annotations

import warnings

import numpy as np

import ember as em
import grad_gen
import program_fuzz
from pool import Outcome

describe = program_fuzz.describe
USER_ERRORS = program_fuzz.USER_ERRORS + (em.errors.NoGradientError,)


def generate(count: int, seed: int = 0) -> list[dict]:
    return [{"seed": seed + i, "source": grad_gen.generate(seed + i)} for i in range(count)]


def kind(item: dict) -> str:
    return item["source"].split("\n", 1)[0].split()[3].rstrip(",")


def run_one(item: dict) -> Outcome:
    previous = em.config.get_fallback()
    em.config.set_fallback("error")
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            eager = program_fuzz._execute(item, compiled=False)
            compiled = program_fuzz._execute(item, compiled=True)
        return program_fuzz._classify(eager, compiled, eager.exact, eager.variables_exact,
                                      user_errors=USER_ERRORS)
    finally:
        em.config.set_fallback(previous)
