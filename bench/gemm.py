"""Case G: float32 matrix products (1024^3 and case D's three shapes), Ember's own kernels
against OpenBLAS, with OpenBLAS's own kernel choice and pinned to the machine's override.

The issue's targets: Ember's own kernel at least 0.8x as fast as OpenBLAS's best kernel, and
faster than the pinned (Haswell) one, on every shape, in the same run. Each variant below is
one process of a system (bench/systems/SYSTEM_cases.py) running every shape and case D, with
its own environment; bench/run.py runs them in turn (round-robin with --rounds).
"""

from __future__ import annotations

import dataclasses
import os
import sys

from report import (D_FLOPS, RECORDED, SYSTEMS, fmt_ratio, fmt_t, is_interpreted, median_of,
                    reference, status_note, table, verdict)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "systems"))
from common import GEMM_CASES, gemm_shape  # noqa: E402

CASES = (*GEMM_CASES, "D")
# The issue's override on this machine, used when the environment does not pin one itself.
ISSUE_CORETYPE = "Haswell"
TARGET_BEST = 0.8  # own kernel's speed / OpenBLAS's best kernel's speed, at least
TARGET_PINNED = 1.0  # own kernel's speed / the pinned kernel's speed, more than


@dataclasses.dataclass(frozen=True)
class Variant:
    key: str                  # its results' key in the JSON
    system: str               # the process: bench/systems/SYSTEM_cases.py
    label: str
    env: tuple = ()           # (name, value) pairs set for the process
    keep_openblas: bool = False  # keep the machine's OPENBLAS_* (numpy and ember unset them)


def pinned_coretype() -> tuple[str, str]:
    """(the OpenBLAS core type of the 'pinned' variants, where it comes from)."""
    if os.environ.get("OPENBLAS_CORETYPE"):
        return os.environ["OPENBLAS_CORETYPE"], "this environment's OPENBLAS_CORETYPE"
    return ISSUE_CORETYPE, "the issue's override for this machine; this environment sets none"


def variants(systems: list[str]) -> list[Variant]:
    """The processes of case G, for the systems selected and installed (torch is not one)."""
    pin = pinned_coretype()[0]
    own = (("EMBER_BLAS", "off"),)
    openblas = (("EMBER_BLAS", "openblas"),)
    pinned = (("OPENBLAS_CORETYPE", pin),)
    all_ = [
        Variant("ember-own", "ember", "ember, own kernels (EMBER_BLAS=off)", own),
        Variant("ember-openblas", "ember", "ember, OpenBLAS own choice", openblas),
        Variant("numpy", "numpy", "numpy, OpenBLAS own choice"),
        Variant("ember-openblas-pinned", "ember", f"ember, OpenBLAS pinned {pin}",
                openblas + pinned, keep_openblas=True),
        Variant("numpy-pinned", "numpy", f"numpy, OpenBLAS pinned {pin}", pinned,
                keep_openblas=True),
        Variant("ember-machine-env", "ember", "ember, machine's env as is", (),
                keep_openblas=True),
        Variant("jax", "jax", SYSTEMS["jax"][0]),
        Variant("tf", "tf", SYSTEMS["tf"][0]),
    ]
    return [v for v in all_ if v.system in systems]


def flops(case: str) -> int:
    if case == "D":
        return D_FLOPS
    m, k, n = gemm_shape(case)
    return 2 * m * k * n


def _kernel(v: Variant, res: dict) -> str:
    """Which kernel that process's products ran (OpenBLAS's as it reported it)."""
    info = res.get("info", {})
    blas = info.get("blas")
    arch = [b.get("architecture") for b in blas or () if b.get("internal_api") == "openblas"]
    openblas = f"OpenBLAS kernel {'/'.join(map(str, arch))}" if arch else ""
    if v.system in ("jax", "tf"):
        return ""
    if v.key == "ember-own":
        return ("own kernels" if info.get("own_gemm_kernels") else
                f"NO own kernels in this ember: {openblas or 'OpenBLAS'}")
    return openblas


def _env(res: dict) -> str:
    env = res.get("info", {}).get("env", {})
    return ", ".join(f"{k}={val}" for k, val in env.items()) or "no OPENBLAS_*/EMBER_BLAS set"


def _cell(res: dict, case: str) -> tuple[str, str]:
    c = res.get("cases", {}).get(case, {})
    ok, note = status_note(c)
    t = c.get("median") if ok else None
    if t is None:
        return "-", f"{case}: {note}"
    gflops = flops(case) / t / 1e9
    return (f"{fmt_t(t)} {gflops:.0f}" if gflops >= 10 else f"{fmt_t(t)} {gflops:.2g}",
            f"{case}: {note}" if note else "")


def best(results: dict, keys: tuple[str, ...], case: str):
    """The fastest of these variants' figures for case (None if none has one)."""
    ts = [(median_of(results, k, case), k) for k in keys]
    ts = [t for t in ts if t[0] is not None]
    return min(ts) if ts else (None, None)


def _ratio_rows(results: dict, own_kernels: bool | None,
                cases: tuple = CASES) -> tuple[list[list[str]], list[str]]:
    rows, notes = [], []
    for case in (c for c in GEMM_CASES if c in cases):
        own = median_of(results, "ember-own", case)
        interpreted = is_interpreted(results.get("ember-own", {}).get("cases", {}).get(case, {}))
        cells = [case[1:]]
        for keys, target, strict in (
                (("numpy", "ember-openblas"), TARGET_BEST, False),
                (("numpy-pinned", "ember-openblas-pinned"), TARGET_PINNED, True)):
            ref, key = best(results, keys, case)
            if own is None or ref is None:
                cells += ["-", verdict(None, "no figure")]
                continue
            speed = ref / own
            met = (speed > target if strict else speed >= target) and not interpreted
            cells += [f"{speed:.2f}x (vs {key})",
                      "NOT MET (runs on the interpreter)" if interpreted else
                      verdict(met if own_kernels else None,
                              f"{'>' if strict else '>='} {target}x"
                              + ("" if own_kernels else ", not Ember's own kernel"))]
        rows.append(cells)
    if own_kernels is False:
        notes.append("NOTE: this ember has no own GEMM kernels (ember.backends.cpu.kernels is "
                     "missing): EMBER_BLAS=off had no effect and 'ember, own kernels' called "
                     "OpenBLAS like the others, so no target is judged.")
    return rows, notes


def report_gemm(results: dict, load_at_start: str = "", cases: tuple = CASES) -> str:
    """Case G's tables: every variant's time and GFLOP/s per shape (and case D), then the
    own kernel's speed relative to OpenBLAS's best and pinned kernels, with the targets;
    a caution when the machine was busier than its cores at the start. `cases`: the
    columns shown (those run)."""
    pin, source = pinned_coretype()
    shown = [v for v in variants(list(SYSTEMS)) if v.key in results]
    header = ["variant", *[f"{c[1:]} ms GF/s" if c != "D" else "case D ms GF/s"
                           for c in cases], "notes"]
    rows = []
    for v in shown:
        res = results[v.key]
        cells, notes = zip(*(_cell(res, c) for c in cases))
        env = f"env: {_env(res)}" if v.key == "ember-machine-env" else ""
        extra = [n for n in (_kernel(v, res), env, *notes) if n]
        if res.get("crash"):
            extra.append(f"PROCESS FAILED: {res['crash']}")
        rounds = [c.get("rounds") for c in res.get("cases", {}).values() if c.get("rounds")]
        if rounds and len(rounds[0]) > 1:
            extra.append(f"median of {len(rounds[0])} rounds")
        rows.append([v.label, *cells, "; ".join(extra)])
    own_info = results.get("ember-own", {}).get("info", {})
    own_kernels = own_info.get("own_gemm_kernels")
    out = ["== Case G: float32 matrix product x @ w per call, m x k x n (1024^3, then case D's "
           "three products), and case D (MLP forward)",
           f"OpenBLAS own choice: OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE unset; pinned: "
           f"OPENBLAS_CORETYPE={pin} ({source}). Cells: median time, GFLOP/s.",
           table(rows, header)]
    ratio_rows, notes = _ratio_rows(results, own_kernels, cases)
    out += ["",
            "Ember's own kernel, speed relative to OpenBLAS (its time / ember-own's time; "
            "reference = the faster of numpy and ember calling OpenBLAS):",
            table(ratio_rows, ["shape", "vs OpenBLAS best", "target", f"vs OpenBLAS {pin}",
                               "target"]),
            *notes]
    if "D" in cases:
        out.append(_case_d_line(results))
    busy = float(load_at_start.split()[0]) if load_at_start else 0.0
    if busy > (os.cpu_count() or 1):
        out.append(f"CAUTION: load average {busy:.2f} at the start, above the "
                   f"{os.cpu_count()} cores: OpenBLAS's threads wait for CPUs they spin on, so "
                   "these figures and verdicts say little; rerun when the machine is quiet.")
    return "\n".join(out)


def _case_d_line(results: dict) -> str:
    t = median_of(results, "ember-machine-env", "D")
    what = _env(results.get("ember-machine-env", {}))
    if t is None:
        return f"case D under the machine's environment as it is ({what}): no figure"
    parts = []
    for key, label in (("jax", "jax.jit"), ("tf", "tf.function"), ("ember-own", "ember own"),
                       ("numpy", "numpy")):
        ref = median_of(results, key, "D")
        if ref is not None:
            parts.append(f"x{label} {fmt_ratio(t, ref)}")
    jax, src = reference(median_of(results, "jax", "D"), RECORDED["D"]["jax"])
    target = verdict(t <= jax, f"no slower than jax.jit {fmt_t(jax)}, {src}")
    if is_interpreted(results["ember-machine-env"]["cases"]["D"]):
        target = "NOT MET (runs on the interpreter)"
    return (f"case D under the machine's environment as it is ({what}): ember {fmt_t(t)} "
            f"({', '.join(parts)}); target {target}")


def main() -> int:
    """Case G alone, for some shapes and variants: `python bench/gemm.py --shapes 256x1024x10
    --variants ember-own,numpy-pinned,ember-openblas-pinned --rounds 5` (`make bench` runs
    it all through run.py). Prints the same tables, with the load average before and after."""
    import argparse
    import shutil
    import tempfile

    import run  # bench/run.py: the processes, their environments and rounds
    from report import load
    keys = [v.key for v in variants(list(SYSTEMS))]
    p = argparse.ArgumentParser(description=main.__doc__)
    p.add_argument("--shapes", default=",".join([*(c[1:] for c in GEMM_CASES), "D"]),
                   help="comma-separated m x k x n of " + ", ".join(c[1:] for c in GEMM_CASES)
                   + ", and D (the case-D MLP)")
    p.add_argument("--variants", default=",".join(keys), help="comma-separated, of "
                   + ",".join(keys))
    p.add_argument("--rounds", type=int, default=3, help="processes per variant, round-robin")
    a = p.parse_args()
    cases = [s if s == "D" else f"G{s}" for s in a.shapes.split(",") if s]
    wanted = [k for k in a.variants.split(",") if k]
    bad = [c for c in cases if c not in CASES] + [k for k in wanted if k not in keys]
    if bad:
        p.error(f"unknown shape or variant {', '.join(bad)}: shapes are "
                f"{', '.join(c[1:] for c in GEMM_CASES)} or D; variants {', '.join(keys)}")
    chosen = [v for v in variants(list(SYSTEMS)) if v.key in wanted]
    start = load()
    cache_dir = tempfile.mkdtemp(prefix="bench-gemm-cache-")
    runs: dict = {}
    try:
        for r in range(max(1, a.rounds)):
            for v in chosen:
                cache = {"EMBER_CACHE_DIR": os.path.join(cache_dir, v.key)}
                env = dict(v.env, **(cache if v.system == "ember" else {}))
                runs.setdefault(v.key, []).append(
                    run.run_system(v.system, "steady", cases, env, v.keep_openblas))
                run.log(f"{v.label}: round {r + 1} done")
    finally:
        shutil.rmtree(cache_dir, ignore_errors=True)
    results = {k: run.merge_rounds(rs) for k, rs in runs.items()}
    print(f"load average at start {start}, at end {load()}")
    print(report_gemm(results, start, tuple(c for c in CASES if c in cases)))
    for key, res in results.items():  # each round's median, to see the spread
        for case in cases:
            rounds = res.get("cases", {}).get(case, {}).get("rounds") or []
            print(f"{key} {case}: rounds {' '.join(fmt_t(t) for t in rounds)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
