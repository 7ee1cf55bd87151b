"""Random programs run eagerly and compiled (`em.function`), compared value for value.

`generate(count, seed)` makes inputs `{"seed", "source"}` from program_gen.py. `run_one` (a
pool.py task) executes the source twice, in fresh namespaces (so each run has its own
variables): once calling `f` directly (eager: each op runs its numpy reference kernel) and
once through `em.function(f, input_signature=SIGNATURE)`, each for the two argument sets in
CALLS, and compares after every call:

- errors: when eager raises, the compiled call must raise an exception of the same class
  (either may be a subclass of the other), and vice versa; an exception class that is not a
  user-facing error (an AttributeError or KeyError from inside Ember, a RuntimeError from the
  backend, ...) is an internal error;
- outputs and variables (after each call, and as a call that raised when it ran left them:
  its writes before the failing op stand, as eagerly; a call whose trace raised ran no op,
  as in TensorFlow): same dtype and shape; integers and bools equal; floats with the same
  NaN positions, and where the generator marked the value exact, equal bit for bit otherwise
  (so the sign of zero and denormals count), else within a relative 1e-4 (sums and
  transcendental functions round differently) with infinities in the same places.
"""

from __future__ import annotations

import linecache
import pathlib
import tempfile
import traceback
import warnings

import numpy as np

import ember as em
import program_gen
from pool import EXPECTED, INTERNAL, MISMATCH, OK, Outcome

USER_ERRORS = (em.OpError, ValueError, TypeError, IndexError, MemoryError, OverflowError,
               ZeroDivisionError)
_WORKDIR = pathlib.Path(tempfile.mkdtemp(prefix="ember-program-fuzz-"))


def generate(count: int, seed: int = 0) -> list[dict]:
    return [{"seed": seed + i, "source": program_gen.generate(seed + i)} for i in range(count)]


def describe(item: dict) -> dict:
    """The program as a script that runs it eagerly and compiled and prints both."""
    runner = (f"\n\nif __name__ == '__main__':  # fuzz program seed {item['seed']}\n"
              "    for fn in (f, em.function(f, input_signature=SIGNATURE)):\n"
              "        for args in CALLS:\n"
              "            print(fn(*[em.constant(a) for a in args]))\n"
              "        print([v.numpy() for v in VARIABLES])\n")
    return {"program.py": item["source"] + runner}


# -- running ------------------------------------------------------------------------------------

class Run:
    """What one execution mode produced: per call, outputs and variables, or an exception."""

    def __init__(self):
        self.calls: list[tuple[list, list]] = []
        self.error: BaseException | None = None
        self.trace = ""
        self.variables_after_error: list = []  # as the failing call left them
        self.traced_last = True  # compiled: the last call's trace succeeded (its error ran)
        self.exact: tuple = ()
        self.variables_exact: tuple = ()


def _load(item: dict) -> dict:
    path = _WORKDIR / f"program_{item['seed']}.py"
    path.write_text(item["source"])
    linecache.checkcache(str(path))
    namespace = {"__name__": f"fuzz_program_{item['seed']}", "__file__": str(path)}
    exec(compile(item["source"], str(path), "exec"), namespace)  # noqa: S102 - our own program
    return namespace


def _execute(item: dict, compiled: bool, **options) -> Run:
    """Runs the program's calls eagerly, or through `em.function(f, **options)` (with its
    SIGNATURE)."""
    run, ns = Run(), {}
    try:
        ns = _load(item)
        run.exact, run.variables_exact = ns["EXACT"], ns["VARIABLES_EXACT"]
        fn = em.function(ns["f"], input_signature=ns["SIGNATURE"], **options) if compiled \
            else ns["f"]
        for args in ns["CALLS"]:
            if compiled:  # an error here is the trace's: no op ran (in TF too), unlike eagerly
                run.traced_last = False
                fn.get_concrete_function(*[em.constant(a) for a in args])
                run.traced_last = True
            outputs = fn(*[em.constant(a) for a in args])
            run.calls.append(([np.asarray(o) for o in outputs],
                              [np.asarray(v.numpy()) for v in ns["VARIABLES"]]))
    except Exception as e:  # noqa: BLE001 - compared below
        run.error, run.trace = e, traceback.format_exc()
        run.variables_after_error = [np.asarray(v.numpy()) for v in ns.get("VARIABLES", ())]
    return run


# -- comparing ----------------------------------------------------------------------------------

def _differs(eager: np.ndarray, compiled: np.ndarray, exact) -> str:
    """'' when they agree, else what differs. `exact` is True, False, or "gradient": a
    gradient sums cotangents from several paths, so where they cancel the difference is
    relative to the largest element, not to the element itself (an absolute tolerance of
    1e-4 of the output's largest magnitude)."""
    gradient, exact = exact == "gradient", exact is True
    if eager.dtype != compiled.dtype or eager.shape != compiled.shape:
        return (f"dtype/shape {eager.dtype}{list(eager.shape)} vs "
                f"{compiled.dtype}{list(compiled.shape)}")
    if eager.dtype.kind not in "fc":
        return "" if np.array_equal(eager, compiled) else "integer values differ"
    e, c = eager.astype(np.float64), compiled.astype(np.float64)
    if not np.array_equal(np.isnan(e), np.isnan(c)):
        return "NaN positions differ"
    ok = ~np.isnan(e)
    if exact:
        if not np.array_equal(e[ok], c[ok]):
            tiny = np.finfo(eager.dtype).tiny
            subnormal = (np.abs(e[ok]) < tiny) & (e[ok] != 0)
            return "denormal values differ" if np.any(subnormal & (e[ok] != c[ok])) \
                else "exact values differ"
        if not np.array_equal(np.signbit(e[ok]), np.signbit(c[ok])):
            return "sign of zero differs"
        return ""
    inf = np.isinf(e) | np.isinf(c)
    if not np.array_equal(e[inf], c[inf]):
        return "infinities differ"
    fin = ok & ~inf
    atol = 1e-5 + (1e-4 * float(np.max(np.abs(e[fin]))) if gradient and fin.any() else 0.0)
    if not np.allclose(c[fin], e[fin], rtol=1e-4, atol=atol):
        return "values differ beyond tolerance"
    return ""


def _compare_values(eager: Run, compiled: Run, exact: tuple, var_exact: tuple) -> list[str]:
    problems = []
    for n, ((e_out, e_var), (c_out, c_var)) in enumerate(zip(eager.calls, compiled.calls)):
        pairs = [(f"output {i}", a, b, x) for i, (a, b, x) in enumerate(zip(e_out, c_out, exact))]
        pairs += [(f"variable v{i}", a, b, x)
                  for i, (a, b, x) in enumerate(zip(e_var, c_var, var_exact))]
        for what, a, b, x in pairs:
            why = _differs(a, b, x)
            if why:
                problems.append(f"call {n}: {what}: {why}\n  eager:    {a!r}\n"
                                f"  compiled: {b!r}")
    return problems


def _same_class(a: BaseException, b: BaseException) -> bool:
    return isinstance(a, type(b)) or isinstance(b, type(a))


def _name(e: BaseException) -> str:
    return type(e).__name__


def _skeleton(e: BaseException) -> str:
    import re
    text = str(e).split("\n")[0]
    text = re.sub(r"\d+", "N", re.sub(r"'[^']*'|\"[^\"]*\"|\[[^\]]*\]", "_", text))
    return f"{_name(e)}: {text[:120]}"


def _classify(eager: Run, compiled: Run, ns_exact: tuple, var_exact: tuple,
              user_errors: tuple = USER_ERRORS) -> Outcome:
    for run, mode in ((eager, "eager"), (compiled, "compiled")):
        if run.error is not None and not isinstance(run.error, user_errors):
            return Outcome(INTERNAL, f"{mode} raised:\n{run.trace}",
                           f"{mode} raised {_skeleton(run.error)}")
    problems = _compare_values(eager, compiled, ns_exact, var_exact)
    if problems:
        first = problems[0].split("\n")[0].split(": ", 2)[-1]
        return Outcome(MISMATCH, "\n".join(problems), f"{first}")
    e, c = eager.error, compiled.error
    if e is None and c is None:
        return Outcome(OK)
    if isinstance(e, MemoryError) and not isinstance(c, MemoryError) \
            and len(compiled.calls) >= len(eager.calls):
        # eager materialises what compiled code folds away (`reduce_max(zeros([2**33]))`):
        # the machine's memory, not the program's meaning, differs
        return Outcome(EXPECTED, f"eager ran out of memory: {_skeleton(e)}")
    if e is not None and c is not None and len(eager.calls) != len(compiled.calls):
        return Outcome(MISMATCH, f"eager raised in call {len(eager.calls)}:\n{eager.trace}\n"
                       f"compiled raised in call {len(compiled.calls)}:\n{compiled.trace}",
                       f"eager raised {_skeleton(e)} in call {len(eager.calls)}, compiled in "
                       f"call {len(compiled.calls)}")
    if e is None or c is None:
        which, err = ("compiled", c) if c is not None else ("eager", e)
        trace = compiled.trace if c is not None else eager.trace
        return Outcome(MISMATCH, f"only {which} raised (after {len(eager.calls)} eager and "
                       f"{len(compiled.calls)} compiled calls):\n{trace}",
                       f"only {which} raised {_skeleton(err)}")
    if not _same_class(e, c):
        return Outcome(MISMATCH, f"eager raised:\n{eager.trace}\ncompiled raised:\n"
                       f"{compiled.trace}", f"eager {_name(e)} but compiled {_name(c)}")
    for i, (a, b, x) in enumerate(zip(eager.variables_after_error,
                                      compiled.variables_after_error if compiled.traced_last
                                      else (), var_exact)):
        why = _differs(a, b, x)  # the writes before the failing op stand, as eagerly
        if why:
            return Outcome(MISMATCH, f"after the error, variable v{i}: {why}\n  eager:    "
                           f"{a!r}\n  compiled: {b!r}\n{eager.trace}",
                           f"variables after the error differ: {why}")
    return Outcome(EXPECTED, f"{_skeleton(e)}")


def run_one(item: dict) -> Outcome:
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        eager = _execute(item, compiled=False)
        compiled = _execute(item, compiled=True)
    return _classify(eager, compiled, eager.exact, eager.variables_exact)
