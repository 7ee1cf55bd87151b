"""AutoGraph's three-way fuzz: each random program of autograph_gen.py runs as plain Python
on ints, eagerly on int32 tensors (Python control flow on eager values) and compiled by
`em.function` (converted, staged where a condition or a range is a tensor; a fallback to the
interpreter is an error), and all three must give the same pair of ints. A pool.py task:
an abort or hang in one program is counted and the run goes on."""

from __future__ import annotations

import linecache
import pathlib
import tempfile
import traceback
import warnings

import numpy as np

import autograph_gen
import ember as em
from pool import INTERNAL, MISMATCH, OK, Outcome

_WORKDIR = pathlib.Path(tempfile.mkdtemp(prefix="ember-autograph-fuzz-"))


def generate(count: int, seed: int = 0) -> list[dict]:
    return [{"seed": seed + i, "source": autograph_gen.generate(seed + i)} for i in range(count)]


def describe(item: dict) -> dict:
    runner = (f"\n\nif __name__ == '__main__':  # autograph fuzz program seed {item['seed']}\n"
              "    import ember as em\n"
              "    for args in ARGS:\n"
              "        print(f(*args), f(*map(em.constant, args)),\n"
              "              em.function(f)(*map(em.constant, args)))\n")
    return {"program.py": item["source"] + runner}


def _load(item: dict) -> dict:
    path = _WORKDIR / f"program_{item['seed']}.py"  # a file: AutoGraph reads the source
    path.write_text(item["source"])
    linecache.checkcache(str(path))
    namespace = {"__name__": f"autograph_fuzz_{item['seed']}", "__file__": str(path)}
    exec(compile(item["source"], str(path), "exec"), namespace)  # noqa: S102 - our program
    return namespace


def _ints(result) -> list[int]:
    return [int(np.asarray(v.numpy() if isinstance(v, em.Tensor) else v)) for v in result]


def run_one(item: dict) -> Outcome:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        previous = em.config.get_fallback()
        em.config.set_fallback("error")
        try:
            ns = _load(item)
            f = em.function(ns["f"])
            for args in ns["ARGS"]:
                want = _ints(ns["f"](*args))
                tensors = [em.constant(a) for a in args]
                eager, compiled = _ints(ns["f"](*tensors)), _ints(f(*tensors))
                if not want == eager == compiled:
                    return Outcome(MISMATCH, f"args {args}: python {want}, eager {eager}, "
                                   f"compiled {compiled}", "python, eager and compiled differ")
        except Exception as e:  # noqa: BLE001 - every error is a failure: programs are valid
            return Outcome(INTERNAL, traceback.format_exc(),
                           f"{type(e).__name__}: {str(e).splitlines()[0][:100]}")
        finally:
            em.config.set_fallback(previous)
    return Outcome(OK)
