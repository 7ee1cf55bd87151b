"""The seeds of `em.random`'s stateful functions (`uniform`, `normal`, `dropout`, ...):
which Philox generator a call draws from, under tf.random.set_seed's rules (TensorFlow's
`random_seed.py`).

A call without an operation seed draws from the global generator, one sequence A1, A2, ...
that `set_seed(s)` restarts; a call with an operation seed draws from the generator of
(global seed, op seed), shared by every call with that seed, restarted by `set_seed` too.
"""

from __future__ import annotations

from ember.frontend.random_generator import Generator
from ember.frontend.trace_scope import init_scope

DEFAULT_GLOBAL_SEED = 87654321  # TensorFlow's DEFAULT_GRAPH_SEED

_global: dict = {"generator": None, "seed": None, "by_op_seed": {}}


def get_global_generator() -> Generator:
    """The generator `em.random.uniform` & co. draw from (made from OS entropy on first use,
    or from `em.random.set_seed`)."""
    if _global["generator"] is None:
        with init_scope():
            _global["generator"] = Generator.from_non_deterministic_state()
    return _global["generator"]


def set_global_generator(generator: Generator) -> None:
    """Replaces the global generator."""
    if not isinstance(generator, Generator):
        raise TypeError(f"em.random.set_global_generator needs a Generator, got {generator!r}")
    _global["generator"] = generator


def set_seed(seed) -> None:
    """Seeds `em.random`: the global generator becomes `Generator.from_seed(seed)` and the
    generators of operation seeds restart (tf.random.set_seed)."""
    seed = int(seed)
    with init_scope():
        _global.update(generator=Generator.from_seed(seed), seed=seed, by_op_seed={})


def generator_for(seed) -> Generator:
    """The global generator, or for an operation `seed` its own generator made from (global
    seed, seed): a sequence that repeats after `set_seed`, as TensorFlow's op seeds."""
    if seed is None:
        return get_global_generator()
    key = (_global["seed"], int(seed))
    if key not in _global["by_op_seed"]:
        glob = DEFAULT_GLOBAL_SEED if key[0] is None else key[0]
        with init_scope():
            _global["by_op_seed"][key] = Generator.from_seed([glob, key[1]])
    return _global["by_op_seed"][key]
