"""Formatting bench/run.py's results: one table per case, ratios to the anchors measured in
the same run, the issue's targets, and its recorded figures for systems with none this run."""

from __future__ import annotations

import os
import platform
import sys
import time

# system key -> (label, module to look for)
SYSTEMS = {"numpy": ("numpy", "numpy"), "ember": ("ember", "ember"),
           "ember_numpy": ("ember, numpy inputs", "ember"),
           "tf": ("tf.function", "tensorflow"), "jax": ("jax.jit", "jax"),
           "torch": ("torch.compile", "torch")}
ANCHORS = ("tf", "jax", "torch")
EMBER_WITH_OVERRIDES = "ember+machine-openblas-env"  # case D rerun, see run.py
STEADY_CASES = "ABCDE"

TITLES = {
    "A": "x + y on 2x2 float32, steady state, per call",
    "B": "50 x (x = tanh(x) * 0.5 + 0.1) on 1,000 float32, per call",
    "C": "((x*2+1)*x - 3)/(x+4) + sin(x) on 10,000,000 float32, per call",
    "D": "MLP forward, batch 256, 784->1024->1024->10, relu, float32, per call",
    "E": "MLP training step (forward, backward, SGD update), batch 256, 784->1024->1024->10, "
         "relu, softmax cross-entropy, float32, per step",
    "F": "first call (trace + compile + run) in a fresh process",
}
C_BYTES = 80e6  # one read + one write of 10M float32
WARM_TARGET = 5e-3  # issue 19: a first call that finds its code in the disk cache
C_TARGET = 2.8e-3  # issue 19, set when a copy of those bytes ran at 33.8 GB/s here
D_FLOPS = 2 * 256 * (784 * 1024 + 1024 * 1024 + 1024 * 10)
# E: the forward's products, one weight gradient per product, the input gradients of the
# second and third products (the first one's, of x, is not needed).
E_FLOPS = 2 * D_FLOPS + 2 * 256 * (1024 * 1024 + 1024 * 10)

# Measured on the issues' machine (an Intel AVX-512 one, not necessarily this one); shown only
# for systems not measured in this run.
RECORDED = {
    "A": {"jax": 8.5e-6, "torch": 12e-6, "tf": 214e-6},
    "B": {"numpy": 37e-6, "torch": 50e-6, "jax": 65e-6},
    "C": {"torch": (14e-3, 16e-3), "tf": 18e-3, "jax": 36e-3, "numpy": 42e-3},
    "D": {"tf": 3.05e-3, "jax": 3.5e-3, "numpy": 5.9e-3},
    "E": {"jax": 9.15e-3, "tf": 10.4e-3, "torch": 15.9e-3},
    "FB": {"jax": 46e-3, "tf": 87e-3},
    "FD": {"jax": 54e-3, "tf": 298e-3},
}
TARGETS = {
    "A": "ember <= 5 us",
    "B": "ember no slower than numpy eager",
    "C": "ember >= 2x faster than torch.compile (reference 14-16 ms here)",
    "D": "ember no slower than jax.jit (reference 3.5 ms)",
    "E": "ember faster than jax.jit (reference 9.15 ms)",
    "F": "cold <= 0.5x jax.jit (issue 19; 23 ms B / 27 ms D recorded); warm disk cache "
         "<= 5 ms",
}
def fmt_t(t) -> str:
    if t is None:
        return "-"
    if isinstance(t, tuple):
        return "-".join(fmt_t(x).split()[0] for x in t) + " " + fmt_t(t[0]).split()[1]
    if t < 1e-3:
        return f"{t * 1e6:.2f} us" if t < 1e-5 else f"{t * 1e6:.1f} us"
    if t < 1:
        return f"{t * 1e3:.2f} ms" if t < 1e-2 else f"{t * 1e3:.1f} ms"
    return f"{t:.2f} s"


def fmt_ratio(a, b) -> str:
    if a is None or b is None:
        return "-"
    if isinstance(b, tuple):
        return f"{fmt_ratio(a, b[1])[:-1]}-{fmt_ratio(a, b[0])}"
    r = a / b
    return f"{r:.2f}x" if r < 10 else f"{r:.1f}x" if r < 100 else f"{r:.0f}x"


def table(rows: list[list[str]], header: list[str]) -> str:
    widths = [max(len(str(r[i])) for r in rows + [header]) for i in range(len(header))]
    line = lambda r: "  ".join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip()  # noqa: E731
    return "\n".join([line(header), line(["-" * w for w in widths])] + [line(r) for r in rows])



def status_note(c: dict) -> tuple[bool, str]:
    """(usable figure?, note) for one system's case result."""
    st = c.get("status")
    fallback = [w["message"] for w in c.get("warnings", [])
                if w["category"] == "InterpreterFallbackWarning"]
    if st == "ok" and fallback:
        return True, "INTERPRETER FALLBACK (InterpreterFallbackWarning: " + fallback[0] + ")"
    if st == "ok":
        return True, ""
    if st == "wrong":
        lines = [ln.strip() for ln in c.get("error", "").splitlines() if ln.strip()]
        key = [ln for ln in lines if ln.startswith(("Mismatch", "Max", "result"))] or lines[-1:]
        return False, "WRONG RESULT vs numpy, not timed: " + "; ".join(key)
    return False, f"{(st or 'missing').upper()}: {c.get('error', 'no result')}"


def median_of(res: dict, system: str, case: str):
    c = res.get(system, {}).get("cases", {}).get(case, {})
    ok, _ = status_note(c)
    return c.get("median") if ok else None


def verdict(ok: bool | None, detail: str) -> str:
    return f"{'MET' if ok else 'NOT MET'} ({detail})" if ok is not None else f"n/a ({detail})"


def is_interpreted(c: dict) -> bool:
    return status_note(c)[1].startswith("INTERPRETER")


def reference(measured, recorded) -> tuple:
    """(time, 'measured' | 'recorded'): this run's figure for an anchor, else the issue's."""
    return (measured, "measured") if measured else (recorded, "recorded")


def steady_verdict(case: str, t, base: dict) -> str:
    if t is None:
        return verdict(None, "ember has no figure")
    if case == "A":
        return verdict(t <= 5e-6, f"{fmt_t(t)} vs 5 us")
    if case == "B":
        if not base["numpy"]:
            return verdict(None, "numpy has no figure")
        return verdict(t <= base["numpy"], f"{fmt_t(t)} vs numpy {fmt_t(base['numpy'])}")
    if case == "C":
        ref, src = reference(base.get("torch"), RECORDED["C"]["torch"][0])
        return verdict(2 * t <= ref, f"{fmt_t(t)} vs torch.compile {fmt_t(ref)} / 2 = "
                       f"{fmt_t(ref / 2)}, {src}")
    ref, src = reference(base.get("jax"), RECORDED[case]["jax"])
    if case == "E":
        return verdict(t < ref, f"{fmt_t(t)} vs jax.jit {fmt_t(ref)}, {src}")
    return verdict(t <= ref, f"{fmt_t(t)} vs jax.jit {fmt_t(ref)}, {src}")


def first_verdict(kind: str, r: dict, limit: float, against: str) -> str:
    t = r.get("median")
    if t is None:
        return f"{kind} n/a (no figure)"
    if is_interpreted(r.get("case", {})):
        return f"{kind} NOT MET (runs on the interpreter)"
    return f"{kind} " + verdict(t <= limit, f"{fmt_t(t)} vs {against}")


def report_case(case: str, res: dict, measured: list[str]) -> str:
    anchors = ["numpy"] + [a for a in ANCHORS if a in measured]
    base = {a: median_of(res, a, case) for a in anchors}
    header = ["system", "time", *[f"x{SYSTEMS[a][0]}" for a in anchors], "reps", "notes"]
    rows = []
    for s in measured:
        if case not in res.get(s, {}).get("cases", {}):  # ember_numpy runs case A only
            continue
        c = res[s]["cases"].get(case, {})
        ok, note = status_note(c)
        t = c.get("median") if ok else None
        extra = []
        if t and case == "C":
            extra.append(f"{C_BYTES / t / 1e9:.1f} GB/s")
            if c.get("copy_2t"):
                extra.append(f"{t / c['copy_2t']:.2f}x its process's 2-thread copy")
        if t and case in "DE":
            extra.append(f"{(D_FLOPS if case == 'D' else E_FLOPS) / t / 1e9:.1f} GFLOP/s")
        if c.get("first_call") is not None and s == "ember":
            extra.append(f"first call {fmt_t(c['first_call'])}")
        reps = f"{c['repeats']}x{c['number']}" if ok and "repeats" in c else "-"
        if ok and len(c.get("rounds", ())) > 1:
            extra.append(f"median of {len(c['rounds'])} rounds, "
                         f"{fmt_t(min(c['rounds']))}..{fmt_t(max(c['rounds']))}")
        rows.append([SYSTEMS[s][0], fmt_t(t), *[fmt_ratio(t, base[a]) for a in anchors],
                     reps, "; ".join(extra + ([note] if note else []))])
    out = [f"== Case {case}: {TITLES[case]}",
           table(rows, header)]
    if case == "C":
        out.extend(copy_lines(res, measured))
    t = median_of(res, "ember", case)
    v = steady_verdict(case, t, base)
    if is_interpreted(res.get("ember", {}).get("cases", {}).get(case, {})):
        v = "NOT MET (runs on the interpreter)"
    out.append(f"target: {TARGETS[case]} -> {v}")
    with_numpy = median_of(res, "ember_numpy", case)
    paired = res.get("ember_numpy", {}).get("cases", {}).get(case, {})
    if case == "A" and paired.get("paired_ratio") and with_numpy:
        r = paired["paired_ratio"]
        out.append(f"numpy inputs vs em.Tensor inputs, timed in one process (median of "
                   f"{paired['pairs']} alternating pairs): {fmt_t(paired['paired_numpy'])} / "
                   f"{fmt_t(paired['paired_tensor'])}, ratio {r:.2f}x (target <= 1.5x) -> "
                   f"{verdict(r <= 1.5, 'numpy inputs take the fast path')}")
        if t:
            out.append(f"  (across the two processes: {fmt_t(with_numpy)} / {fmt_t(t)} = "
                       f"{with_numpy / t:.2f}x; load differs between them)")
    elif case == "A" and with_numpy and t:
        out.append(f"numpy inputs vs em.Tensor inputs: {fmt_t(with_numpy)} / {fmt_t(t)} = "
                   f"{with_numpy / t:.2f}x (target <= 1.5x) -> "
                   f"{verdict(with_numpy <= 1.5 * t, 'numpy inputs take the fast path')}")
    again = median_of(res, EMBER_WITH_OVERRIDES, case)
    if again:
        overrides = ", ".join(f"{n}={os.environ[n]}" for n in ("OPENBLAS_CORETYPE",
                                                               "OPENBLAS_L2_SIZE")
                              if n in os.environ)
        ratios = ", ".join(f"x{SYSTEMS[a][0]} {fmt_ratio(again, base[a])}" for a in anchors)
        out.append(f"ember with the machine's {overrides} kept (the kernel numpy's OpenBLAS "
                   f"then uses): {fmt_t(again)} ({ratios})")
        out.append(f"target with the machine's OpenBLAS override: "
                   f"{steady_verdict(case, again, base)}")
    have = [s for s in measured if median_of(res, s, case) is not None]
    out.extend(recorded_lines("", RECORDED[case], have, t))
    return "\n".join(out)


def copy_lines(res: dict, measured: list[str]) -> list[str]:
    """Case C's copy baseline (systems/common.copy_baseline: the median over the systems'
    processes of a numpy copy of the same 40 MB into a faulted-in buffer) and issue 19's
    target, which was set when such a copy ran at 33.8 GB/s here."""
    parts, copies = [], []
    for key, what in (("copy_1t", "1 thread"), ("copy_2t", "2 threads")):
        values = sorted(c[key] for s in measured
                        if (c := res.get(s, {}).get("cases", {}).get("C", {})).get(key))
        if values:
            t = values[len(values) // 2]
            copies.append(t)
            parts.append(f"{what} {fmt_t(t)} = {C_BYTES / t / 1e9:.1f} GB/s")
    if not parts:
        return []
    lines = ["copy baseline (numpy copy of the same bytes into a faulted-in buffer, in the "
             "same processes): " + ", ".join(parts)]
    t = median_of(res, "ember", "C")
    if t:
        lines.append(f"target (issue 19): ember <= {fmt_t(C_TARGET)} -> "
                     + verdict(t <= C_TARGET, f"{fmt_t(t)} = {C_BYTES / t / 1e9:.1f} GB/s"))
        if min(copies) > C_TARGET:
            lines.append(f"  out of reach on this machine: the faster copy alone takes "
                         f"{fmt_t(min(copies))} (the target was set where it took 2.36 ms); "
                         f"ember takes {t / min(copies):.2f}x that copy")
    return lines


def recorded_lines(label: str, rec: dict, have: list[str], ember_t) -> list[str]:
    """The issue's figures for the systems that have none in this run."""
    missing = {s: v for s, v in rec.items() if s not in have}
    if not missing:
        return []
    parts = [f"{SYSTEMS[s][0]} {fmt_t(v)}"
             + (f" (ember {fmt_ratio(ember_t, v)})" if ember_t else "") for s, v in missing.items()]
    what = f" ({label})" if label else ""
    return [f"recorded earlier on the issues' machine, NOT measured in this run{what}: "
            + ", ".join(parts)]


def report_first(first: dict, measured: list[str], res: dict) -> str:
    jax = {c: first.get(("jax", "cold", c), {}).get("median") for c in "BD"}
    header = ["system", "B", "xjax.jit", "D", "xjax.jit", "import", "notes"]
    rows = []
    for s in measured:
        if s in ("numpy", "ember_numpy"):  # steady-state systems only (case A)
            continue
        for kind in (("cold", "warm") if s == "ember" else ("cold",)):
            label = SYSTEMS[s][0] + (f" ({kind} disk cache)" if s == "ember" else "")
            cells, notes = [], []
            for case in "BD":
                r = first.get((s, kind, case), {})
                ok, note = status_note(r.get("case", {}))
                t = r.get("median") if ok else None
                cells += [fmt_t(t), fmt_ratio(t, jax[case])]
                items = [f"{len(r['times'])} runs"] if r.get("times") else []
                if s == "ember" and kind == "cold" and r.get("cache_files") is not None:
                    items.append(f"left {r['cache_files']} file(s) in EMBER_CACHE_DIR")
                notes.append(f"{case}: " + ", ".join(items + ([note] if note else [])))
            imp = first.get((s, kind, "B"), {}).get("import_s")
            rows.append([label, *cells, fmt_t(imp), "; ".join(notes)])
    out = [f"== Case F: {TITLES['F']} (median of fresh processes; import time not included)",
           table(rows, header)]
    for case in "BD":
        cold = first.get(("ember", "cold", case), {})
        warm = first.get(("ember", "warm", case), {})
        ref, src = reference(jax[case], RECORDED["F" + case]["jax"])
        files = cold.get("cache_files")
        half = ref * 0.5 if ref else None
        parts = [first_verdict("cold", cold, half, f"0.5x jax.jit = {fmt_t(half)}, {src}"),
                 first_verdict("warm", warm, WARM_TARGET, fmt_t(WARM_TARGET))]
        run, w = median_of(res, "ember", case), warm.get("median")
        if run and w:  # the first call includes one run, which no cache can shorten
            parts[-1] += f" ({fmt_t(w - run)} besides its {fmt_t(run)} run)"
        if files == 0:
            parts.append("Ember wrote nothing to EMBER_CACHE_DIR: no disk cache yet, so 'warm' "
                         "is a second cold start")
        out.append(f"target {case}: " + "; ".join(parts))
    out.append(f"targets: {TARGETS['F']}")
    out.extend(tier_lines(first, res))
    runs = [f"{c} {fmt_t(median_of(res, 'ember', c))}" for c in "BD"
            if median_of(res, "ember", c)]
    if runs:
        out.append("a first call includes one run; ember's steady-state run alone (cases B, D): "
                   + ", ".join(runs))
    for case in "BD":
        have = [s for s in measured if first.get((s, "cold", case), {}).get("median")]
        out.extend(recorded_lines(f"first call of {case}", RECORDED["F" + case], have,
                                  first.get(("ember", "cold", case), {}).get("median")))
    return "\n".join(out)


def tier_lines(first: dict, res: dict) -> list[str]:
    """Ember's two tiers (runtime/tiers.py) per case: the cold first call at the fast tier,
    the fast tier's calls, the background compile of the full tier, the steady state after
    the swap (against jax.jit's steady state, when measured), and the tier a warm start
    found on disk."""
    lines = []
    for case in "BD":
        cold = first.get(("ember", "cold", case), {}).get("tiers") or {}
        warm = first.get(("ember", "warm", case), {}).get("tiers") or {}
        if not cold.get("first_tier"):
            continue
        tier = "/".join(cold["first_tier"])
        t = first.get(("ember", "cold", case), {}).get("median")
        name = "tier 0 (interpreter)" if tier == "interp" else f"the {tier} tier"
        parts = [f"cold first call {fmt_t(t)} at {name}"]
        if cold.get("tier0_call") is not None:
            parts.append(f"tier-0 calls {fmt_t(cold['tier0_call'])}")
        if cold.get("compiled_ready_after") is not None:
            parts.append(f"fast tier compiled in the background and swapped in "
                         f"{fmt_t(cold['compiled_ready_after'])} after the first call")
        if cold.get("fast_tier_call") is not None:
            parts.append(f"fast-tier calls {fmt_t(cold['fast_tier_call'])}")
        if cold.get("full_tier_ready_after") is not None:
            since = "the first call" if tier == "interp" else "being queued"
            parts.append(f"full tier compiled in the background and swapped in "
                         f"{fmt_t(cold['full_tier_ready_after'])} after {since}")
        after = cold.get("steady_after_swap")
        if after is not None:
            jax = median_of(res, "jax", case)
            swapped = cold.get("full_tier_ready_after") is not None
            parts.append(f"steady {'after the swap ' if swapped else ''}{fmt_t(after)}"
                         + (f" (x jax.jit steady {fmt_ratio(after, jax)})" if jax else ""))
        if warm.get("first_tier"):
            parts.append(f"warm start: first call at the {'/'.join(warm['first_tier'])} tier "
                         f"(from the disk cache)")
        lines.append(f"ember tiers, case {case}: " + "; ".join(parts))
    return lines


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def header_lines(res: dict, available: dict, load_at_start: str) -> list[str]:
    cpu = "?"
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name"))
    except (OSError, StopIteration):
        pass
    lines = [f"Ember CPU benchmarks  {time.strftime('%Y-%m-%d %H:%M')}",
             f"machine: {cpu}, {os.cpu_count()} cores, load average "
             f"{load_at_start} at the start; "
             f"python {platform.python_version()} ({sys.executable})"]
    for s, (label, _) in SYSTEMS.items():
        if s in res:
            info = res[s].get("info", {})
            crash = f"; PROCESS FAILED: {res[s]['crash']}" if res[s].get("crash") else ""
            py = res[s].get("python", sys.executable)
            py = f"; run by {py} (this checkout's ember)" if py != sys.executable else ""
            lines.append(f"  {label:<14} {info.get('version', '?'):<12} measured in this run "
                         f"(import {fmt_t(info.get('import_s'))}){py}{crash}")
        else:
            lines.append(f"  {label:<14} {'-':<12} {available.get(s) or 'not installed'}: "
                         f"recorded figures shown where the issue has them")
    np_info = res.get("numpy", {}).get("info", {})
    blas = np_info.get("blas")
    if blas is None:
        kern = "unknown (neither threadpoolctl nor numpy's OpenBLAS found)"
    else:
        kern = ", ".join(f"{b['internal_api']} {b.get('version')} kernel "
                         f"{b.get('architecture')} x{b.get('num_threads')}" for b in blas) or "none"
    lines.append(f"numpy and ember (numpy's OpenBLAS): OPENBLAS_CORETYPE/OPENBLAS_L2_SIZE unset "
                 f"(elsewhere: {os.environ.get('OPENBLAS_CORETYPE', 'unset')}/"
                 f"{os.environ.get('OPENBLAS_L2_SIZE', 'unset')}); BLAS: {kern}")
    lines.append("Figures: median per-call time over repeated timed blocks after warm-up "
                 "(reps = blocks x calls per block); xNAME = this time / NAME's time in this run "
                 "(below 1 = faster than NAME).")
    return lines
