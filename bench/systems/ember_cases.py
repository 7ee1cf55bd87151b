"""Ember: em.function, compiled per static input shape by the CPU backend."""
import importlib.util
import statistics
import time

import common  # first: starts the import clock
import ember as em

# Case G's "Ember's own kernel" figure means something only when this ember has them (with
# EMBER_BLAS=off they replace OpenBLAS); bench/gemm.py says so when they are missing.
INFO = {"own_gemm_kernels": importlib.util.find_spec("ember.backends.cpu.kernels") is not None}

PROGRAMS = common.programs(em.tanh, em.sin, em.relu, em.matmul)


def convert(arrays):
    return [em.constant(a) for a in arrays]


def compile(case):
    return em.function(PROGRAMS[case])


def run(fn, args):
    return fn(*args)


def train_step(arrays):
    """Case E: one em.function reads the weights (em.Variables), takes the loss's gradients
    with em.GradientTape, and applies SGD with assign_sub."""
    x, labels = em.constant(arrays[0]), em.constant(arrays[1])
    params = [em.Variable(a) for a in arrays[2:]]
    lr = common.LEARNING_RATE

    @em.function
    def step(x, labels):
        w1, b1, w2, b2, w3, b3 = params
        with em.GradientTape() as tape:
            h = em.nn.relu(em.matmul(x, w1) + b1)
            h = em.nn.relu(em.matmul(h, w2) + b2)
            logits = em.matmul(h, w3) + b3
            loss = em.reduce_mean(
                em.nn.sparse_softmax_cross_entropy_with_logits(labels, logits))
        for p, g in zip(params, tape.gradient(loss, params)):
            p.assign_sub(lr * g)
        return loss

    return (lambda: step(x, labels)), (lambda: [p.numpy() for p in params])


def settle(call, mode, fn=None, args=None):
    """Tiered compilation (runtime/tiers.py): the first call ran tier 0 (the interpreter,
    runtime/tier0.py) or the fast tier (unless a cache had the full one); the calls up to
    the threshold run on, the fast tier's last one queues the full tier, and this waits
    until it is swapped in, so that steady-state figures are the full tier's. Reports the
    first call's tier, the per-call time of tier 0 and of the fast tier, when compiled code
    replaced tier 0 and when the full tier was swapped in (from the first call's check,
    just after it returned; for a fast first call from the full tier's queueing), and
    (mode "first") the per-call time after the swap."""
    from ember.runtime import tiers
    out = {}
    start = time.perf_counter()
    if fn is not None:
        out["first_tier"] = sorted(set(fn.get_concrete_function(*args)
                                       .compiled_tiers.values()))
    before = len(tiers.swaps())
    tier0, times = [], []
    for _ in range(em.config.tier_threshold() - 1):  # the first call counted as one
        swapped = len(tiers.swaps()) != before
        t = time.perf_counter()
        call()
        (times if swapped or out.get("first_tier") != ["interp"] else tier0).append(
            time.perf_counter() - t)
    queued = time.perf_counter()
    tiers.wait()
    if out.get("first_tier") == ["fast"]:
        out["fast_tier_call"] = statistics.median(times) if times else None
        out["full_tier_ready_after"] = time.perf_counter() - queued
    if out.get("first_tier") == ["interp"]:
        out["tier0_call"] = statistics.median(tier0) if tier0 else None
        done = {(old, new): at for _, old, new, at in tiers.swaps()[before:]}
        if ("interp", "fast") in done:
            out["compiled_ready_after"] = done["interp", "fast"] - start
        if ("fast", "full") in done:
            out["full_tier_ready_after"] = done["fast", "full"] - start
    if fn is not None:
        out["tier_after_settle"] = sorted(set(fn.get_concrete_function(*args)
                                              .compiled_tiers.values()))
    if mode == "first":
        out["steady_after_swap"] = common.measure(call, min_repeats=5, spend_s=0.5)["median"]
    return out


def to_numpy(out):
    return out.numpy()


if __name__ == "__main__":
    common.main(__import__(__name__), "ember", em.__version__)
