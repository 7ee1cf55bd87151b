"""The compiled-vs-eager differential over the ops of issue 13: random programs of
ops_gen.py, run by program_fuzz.py's runner (eagerly, then through `em.function`, values and
errors compared) with the interpreter fallback turned into an error, so every op must
compile. A pool.py task: an abort or a hang in one program is counted and the run goes on."""

from __future__ import annotations

import re

import ember as em
import ops_gen
import program_fuzz
from pool import Outcome

describe = program_fuzz.describe


def generate(count: int, seed: int = 0) -> list[dict]:
    return [{"seed": seed + i, "source": ops_gen.generate(seed + i)} for i in range(count)]


def used(item: dict) -> list[str]:
    """The recipes (public functions) program `item` calls."""
    return eval(re.search(r"^USED = (.*)$", item["source"], re.M).group(1))  # noqa: S307


def run_one(item: dict) -> Outcome:
    previous = em.config.get_fallback()
    em.config.set_fallback("error")
    try:
        return program_fuzz.run_one(item)
    finally:
        em.config.set_fallback(previous)
