"""The CPU-backend benchmark suite: Ember against numpy and, when installed, tf.function,
jax.jit and torch.compile. Benchmarks, not tests: every figure is printed as a ratio to the
anchors measured in the same run, next to the issue's target.

    python bench/run.py                  # everything (make bench)
    python bench/run.py --cases A,D --systems numpy,ember --first-repeats 1
    python bench/run.py --cases G --rounds 3   # matrix products: own kernels vs OpenBLAS

Each system runs in its own process (bench/systems/SYSTEM_cases.py), one after another;
steady-state figures are medians of >= 7 timed blocks after warm-up. Case F (first call)
starts a fresh process per measurement; case G (bench/gemm.py) runs numpy, ember, jax and tf
in several environments each. See bench/README.md.
"""

from __future__ import annotations

import argparse
import functools
import importlib.util
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import gemm
from report import (EMBER_WITH_OVERRIDES, STEADY_CASES, SYSTEMS, header_lines, load,
                    report_case, report_first)

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
SYSTEMS_DIR = os.path.join(HERE, "systems")

TIMEOUT_S = {"steady": 240, "first": 120}


def log(msg: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


# numpy and ember run matrix products in numpy's OpenBLAS: both run without the machine's
# OpenBLAS overrides, which pin an older kernel (the others do not use OpenBLAS).
OPENBLAS_OVERRIDES = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")


def system_env(system: str, extra: dict | None = None, keep_openblas: bool = False) -> dict:
    env = dict(os.environ)
    if system in ("numpy", "ember") and not keep_openblas:
        for name in OPENBLAS_OVERRIDES:
            env.pop(name, None)
    env.update(extra or {})
    return env


@functools.cache
def interpreter(system: str) -> str:
    """This interpreter, except for ember when its `ember` is not this checkout's (e.g.
    .venv-anchors installed from another worktree): then this checkout's .venv, if made."""
    if not system.startswith("ember"):
        return sys.executable
    spec = importlib.util.find_spec("ember")
    mine = os.path.join(REPO, "ember", "__init__.py")
    venv = os.path.join(REPO, ".venv", "bin", "python")
    if spec and spec.origin and os.path.realpath(spec.origin) == os.path.realpath(mine):
        return sys.executable
    return venv if os.access(venv, os.X_OK) else sys.executable


def run_system(system: str, mode: str, cases: list[str], extra_env=None,
               keep_openblas: bool = False) -> dict:
    """Runs one system's process; returns its JSON, with 'crash' set if it died early."""
    fd, out = tempfile.mkstemp(prefix=f"bench-{system}-", suffix=".json")
    os.close(fd)
    os.unlink(out)
    cmd = [interpreter(system), os.path.join(SYSTEMS_DIR, f"{system}_cases.py"), mode, *cases,
           "--out", out]
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(cmd, env=system_env(system, extra_env, keep_openblas),
                              capture_output=True,
                              text=True, timeout=TIMEOUT_S[mode])
        rc, err = proc.returncode, proc.stderr
    except subprocess.TimeoutExpired as e:
        err = e.stderr or ""
        rc, err = "timeout", err.decode(errors="replace") if isinstance(err, bytes) else err
    wall = time.perf_counter() - t0
    data = {"cases": {}, "info": {}}
    if os.path.exists(out):
        with open(out) as f:
            data = json.load(f)
        os.unlink(out)
    data["wall_s"] = wall
    data["python"] = cmd[0]
    if rc != 0:
        tail = [ln for ln in (err or "").strip().splitlines() if ln.strip()][-1:]
        why = f"timed out after {TIMEOUT_S[mode]} s" if rc == "timeout" else f"exit {rc}"
        data["crash"] = f"{why}: {tail[0][:300] if tail else ''}".rstrip(": ")
        for c in cases:
            data["cases"].setdefault(c, {"status": "crash", "error": data["crash"]})
    return data


def merge_rounds(runs: list[dict]) -> dict:
    """One system's result from several rounds: the first round's, with each case's median
    replaced by the median of the rounds' medians (every round's kept in `rounds`)."""
    merged = runs[0]
    for case, c in merged["cases"].items():
        medians = [r["cases"].get(case, {}).get("median") for r in runs]
        if c.get("status") == "ok" and all(m is not None for m in medians):
            c["rounds"] = medians
            c["median"] = statistics.median(medians)
        # case C's copy baseline (common.copy_baseline), case A's paired figures
        # (ember_numpy_cases.settle)
        for key in ("copy_1t", "copy_2t", "paired_numpy", "paired_tensor", "paired_ratio"):
            copies = [r["cases"].get(case, {}).get(key) for r in runs]
            if c.get(key) is not None and all(v is not None for v in copies):
                c[key] = statistics.median(copies)
    return merged


def steady(systems: list[str], cases: list[str], cache_dir: str, rounds: int = 1) -> dict:
    """Each system's process in turn, `rounds` times round-robin (load on a shared machine
    drifts over minutes: rounds spread it over every system alike)."""
    runs: dict = {}
    for r in range(rounds):
        for s in systems:
            log(f"{s}: steady state, cases {' '.join(cases)}"
                + (f" (round {r + 1} of {rounds})" if rounds > 1 else ""))
            extra = {"EMBER_CACHE_DIR": cache_dir} if s.startswith("ember") else None
            own = [c for c in cases if c == "A"] if s == "ember_numpy" else cases
            if not own:
                continue
            runs.setdefault(s, []).append(run_system(s, "steady", own, extra))
            log(f"{s}: done in {runs[s][-1]['wall_s']:.1f} s")
    results = {s: merge_rounds(rs) for s, rs in runs.items()}
    if "ember" in systems and "D" in cases and any(n in os.environ for n in OPENBLAS_OVERRIDES):
        log("ember: case D again, with the machine's OpenBLAS overrides")
        results[EMBER_WITH_OVERRIDES] = run_system("ember", "steady", ["D"],
                                                   {"EMBER_CACHE_DIR": cache_dir},
                                                   keep_openblas=True)
    return results


def steady_gemm(systems: list[str], cache_dir: str, rounds: int) -> dict:
    """Case G: every variant's process (gemm.variants) in turn, `rounds` times round-robin."""
    runs: dict = {}
    for r in range(rounds):
        for v in gemm.variants(systems):
            log(f"{v.label}: case G and D" + (f" (round {r + 1} of {rounds})" if rounds > 1
                                                else ""))
            # a cache per variant: nothing compiled (or chosen) under one EMBER_BLAS is reused
            # under another
            cache = {"EMBER_CACHE_DIR": os.path.join(cache_dir, v.key)}
            env = dict(v.env, **(cache if v.system == "ember" else {}))
            runs.setdefault(v.key, []).append(
                run_system(v.system, "steady", list(gemm.CASES), env, v.keep_openblas))
            log(f"{v.label}: done in {runs[v.key][-1]['wall_s']:.1f} s")
    return {k: merge_rounds(rs) for k, rs in runs.items()}


def count_files(path: str) -> int:
    return sum(len(files) for _, _, files in os.walk(path))


TIER_FIGURES = ("fast_tier_call", "full_tier_ready_after", "steady_after_swap", "tier0_call",
                "compiled_ready_after")


def tier_figures(cases: list[dict]) -> dict:
    """Ember's tiered compilation in case F (ember_cases.settle): the first call's tier (of
    the last run) and the median over the runs of each figure."""
    ok = [c for c in cases if c.get("status") == "ok"]
    out = {"first_tier": ok[-1].get("first_tier") if ok else None}
    for name in TIER_FIGURES:
        values = [c[name] for c in ok if c.get(name) is not None]
        out[name] = statistics.median(values) if values else None
    return out


def first_calls(systems: list[str], repeats: int) -> dict:
    """Case F: median over `repeats` fresh processes of the first call of B and D."""
    out: dict = {}
    for s in systems:
        for case in ("B", "D"):
            runs = {"cold": [], "warm": []} if s == "ember" else {"cold": []}
            for i in range(repeats):
                tmp = tempfile.mkdtemp(prefix=f"bench-cache-{s}-")
                try:
                    if s == "ember":
                        env = {"EMBER_CACHE_DIR": tmp}
                        cold = run_system(s, "first", [case], env)
                        cold["cache_files"] = count_files(tmp)
                        warm = run_system(s, "first", [case], env)
                        runs["cold"].append(cold)
                        runs["warm"].append(warm)
                    else:  # an empty inductor cache, so the first call is really cold
                        env = {"TORCHINDUCTOR_CACHE_DIR": tmp} if s == "torch" else None
                        cold = run_system(s, "first", [case], env)
                        runs["cold"].append(cold)
                finally:
                    shutil.rmtree(tmp, ignore_errors=True)
                first = cold["cases"].get(case, {}).get("first_call")
                if first is None or first > 3:  # broken, or too slow for noise to matter
                    break
            for kind, rs in runs.items():
                cs = [r["cases"].get(case, {}) for r in rs]
                ok = [c["first_call"] for c in cs if c.get("status") == "ok"]
                out[(s, kind, case)] = {
                    "median": statistics.median(ok) if ok else None,
                    "times": ok, "case": cs[-1] if cs else {},
                    "tiers": tier_figures(cs),
                    "import_s": statistics.median(r["info"].get("import_s", 0) for r in rs),
                    "cache_files": rs[0].get("cache_files") if rs else None,
                }
            log(f"{s}: first call {case} x{len(runs['cold'])}")
    return out


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--cases", default="A,B,C,D,E,F,G", help="comma-separated, of A,B,C,D,E,F,G")
    p.add_argument("--systems", default=",".join(SYSTEMS), help="comma-separated, of "
                   + ",".join(SYSTEMS))
    p.add_argument("--first-repeats", type=int, default=3,
                   help="fresh processes per first-call figure (case F)")
    p.add_argument("--rounds", type=int, default=1,
                   help="steady-state runs of every system, round-robin; each figure is the "
                        "median of the rounds' medians")
    p.add_argument("--json", help="also write the raw results here")
    a = p.parse_args()
    cases = [c for c in a.cases.upper().split(",") if c]
    wanted = [s for s in a.systems.split(",") if s]
    if "numpy" not in wanted:
        wanted.insert(0, "numpy")
    available = {}
    for s in wanted:
        if s not in SYSTEMS:
            p.error(f"unknown system {s!r}")
        available[s] = importlib.util.find_spec(SYSTEMS[s][1]) is not None
    systems = [s for s in SYSTEMS if s in wanted and available[s]]
    not_run = {s: ("not installed" if s in wanted else "not selected") for s in SYSTEMS
               if s not in systems}
    load_at_start = load()
    t0 = time.perf_counter()
    cache_dir = tempfile.mkdtemp(prefix="bench-ember-cache-")
    try:
        res = steady(systems, [c for c in cases if c in STEADY_CASES], cache_dir,
                     max(1, a.rounds))
        first = first_calls([s for s in systems if s not in ("numpy", "ember_numpy")],
                            a.first_repeats) \
            if "F" in cases else {}
        gemm_res = steady_gemm(systems, cache_dir, max(1, a.rounds)) if "G" in cases else {}
    finally:
        shutil.rmtree(cache_dir, ignore_errors=True)
    shown = dict(res)  # the header's per-system lines: case G's processes when only G ran
    for v in gemm.variants(systems):
        if v.key in gemm_res:
            shown.setdefault(v.system, gemm_res[v.key])
    for s in systems:  # e.g. ember_numpy, which runs case A only
        if s not in shown:
            not_run[s] = "no steady-state case of this run"
    lines = header_lines(shown, not_run, load_at_start)
    print("\n".join(lines) + "\n")
    for case in cases:
        if case in STEADY_CASES:
            print(report_case(case, res, systems) + "\n")
    if "F" in cases:
        print(report_first(first, systems, res) + "\n")
    if "G" in cases:
        print(gemm.report_gemm(gemm_res, load_at_start) + "\n")
    print(f"total {time.perf_counter() - t0:.0f} s; load average at the end "
          f"{load()} (other work on this machine "
          f"skews every figure)")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"steady": res, "gemm": gemm_res,
                       "first": {"/".join(k): v for k, v in first.items()}},
                      f, indent=1, default=str)
    return 0


if __name__ == "__main__":
    sys.exit(main())
