"""The seeds of `em.random`'s stateful functions (`uniform`, `normal`, `dropout`, ...):
which Philox generator a call draws from, eagerly and traced, under tf.random.set_seed's
rules (TensorFlow's `random_seed.py`).

Eagerly, a call without an operation seed draws from the global generator, one sequence
A1, A2, ... that `set_seed(s)` restarts; a call with an operation seed draws from the
generator of (global seed, op seed), shared by every call with that seed, restarted by
`set_seed` too.

Traced into an em.function, random ops own their state, as TensorFlow's kernels keep their
counters: the ops without an operation seed share one generator per trace (a nested
function's ops share the enclosing trace's), started where `set_seed` starts the global
one, so each function draws the sequence A1, A2, ... of a re-run of the program
("tf.function acts like a re-run of a program"), A3, A4 on its next call; an op with an
operation seed owns a generator of (global seed, op seed), so two ops with `seed=1` give
(A1, A1), then (A2, A2). Each state is an int64 [3] Variable made when the op is traced
(under `em.init_scope`) and captured by the trace, so compiled code and the interpreter read
and advance it alike on every call. `set_seed` assigns every such state that is still alive
its starting value for the new seed: traced functions restart without being traced again.
Functions without random ops capture nothing: their calls cost what they did.

Every state this module makes (the global generator's, an op seed's, a traced op's) is a
plain Variable of this process, even under an em.distribute strategy's scope or inside
`strategy.run`: it is never mirrored, so making it lazily inside a replica needs no
meeting of the replicas, and the replicas drawing from it take turns (each draw reads and
advances the state under its lock) and get different numbers, as TensorFlow's replicas
do with a generator made outside a strategy. One exception: the random ops of an
em.function traced by a replica of an eager `strategy.run` (one trace then serves every
replica) get a state per replica, bound by each replica's call, whose key is hashed with
the replica id as for an em.random.Generator made under the strategy's scope: a compiled
call holds the locks of the variables it writes until it returns, so replicas sharing a
state would take turns, and a step that also all-reduces would wait forever for them.

Without a global seed, each trace's shared generator starts from the operating system's
entropy (TensorFlow picks a random seed), and op seeds pair with DEFAULT_GLOBAL_SEED.

What owns no generator here but is seeded when it is made, such as em.data's `shuffle` and
Keras's `fit(shuffle=True)`, asks `get_seed(op_seed)` for its pair of seeds, TensorFlow's
`random_seed.get_seed`: with a global seed and no op seed, the op seed is the next of a
sequence that `set_seed` restarts, so the same program makes the same seeds in any process.
"""

from __future__ import annotations

import os
import threading
import weakref

import numpy as np

from ember.dialects.ember import dtypes
from ember.frontend.autodiff import recording
from ember.frontend.object_identity import WeakIdentityKeyDictionary
from ember.frontend.random_generator import (STATE_SIZE, Generator, generator_of,
                                             state_from_seed)
from ember.frontend.trace_scope import active_graphs, current_graph, init_scope
from ember.frontend.variables import Variable

DEFAULT_GLOBAL_SEED = 87654321  # TensorFlow's DEFAULT_GRAPH_SEED

_MAXINT32 = 2**31 - 1

_global: dict = {"generator": None, "seed": None, "by_op_seed": {}, "op_seeds": None}
# The generators of random ops traced into em.functions: the one shared by a trace's ops
# without an op seed, by trace (a FuncGraph); and every traced state -> its op seed (None:
# the shared one), which set_seed resets. Both forget a trace's states when it dies.
_shared_by_trace: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_traced_states = WeakIdentityKeyDictionary()  # (a Variable cannot be hashed)
_op_seeds_by_trace: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # get_seed's
_lock = threading.Lock()  # traces on several threads register states; set_seed reads them

# em.distribute's hook (set by ember.runtime.distribute.generators: the frontend imports no
# runtime): `replica_states(make)` gives (a Variable holding a state `make()` per replica,
# its strategy) when a replica of an eager `strategy.run` traces, else None (see above).
replica_states = None


class _ProcessState(Variable):
    """The state of a generator this module owns: an ordinary Variable of this process. A
    subclass, so that em.distribute's variable creators, which make `em.Variable(...)` a
    mirrored or parameter-server variable under a strategy's scope (inside a replica
    through a merge_call, a meeting of every replica), leave it alone."""


def _own_state(state: np.ndarray) -> Variable:
    """A new process-local generator state starting at `state` (made eagerly)."""
    with init_scope():
        return _ProcessState(state, trainable=False, name="rng_state", dtype=dtypes.int64)


def get_global_generator() -> Generator:
    """The generator eager `em.random.uniform` & co. draw from (made from OS entropy on
    first use, or from `em.random.set_seed`)."""
    if _global["generator"] is None:
        with _lock:  # replicas may ask at once: one generator, not one each
            if _global["generator"] is None:
                _global["generator"] = generator_of(_own_state(_entropy()))
    return _global["generator"]


def set_global_generator(generator: Generator) -> None:
    """Replaces the global generator, the one eager calls draw from. Traced random ops
    draw from their trace's own; a function that captured the old generator itself
    (`get_global_generator().uniform(...)`) keeps it, as TensorFlow's."""
    if not isinstance(generator, Generator):
        raise TypeError(f"em.random.set_global_generator needs a Generator, got {generator!r}")
    _global["generator"] = generator


def set_seed(seed) -> None:
    """Sets the global seed (tf.random.set_seed): the global generator becomes
    `Generator.from_seed(seed)`, the generators of operation seeds restart, and so do the
    random ops already traced into em.functions (compiled or not, without tracing again).

    Example:
      >>> em.random.set_seed(1234)
      >>> f = em.function(lambda: em.random.uniform([2]))
      >>> a = f().numpy()
      >>> em.random.set_seed(1234)
      >>> bool((f().numpy() == a).all())
      True
    """
    seed = int(seed)
    with init_scope():
        _global.update(generator=generator_of(_own_state(state_from_seed(seed))), seed=seed,
                       by_op_seed={}, op_seeds=_sequence(seed))
        with _lock:
            states = list(_traced_states.items())
        for state, op_seed in states:
            state.assign(_initial_state(op_seed))


def get_seed(op_seed) -> tuple:
    """The (global seed, operation seed) pair seeding something random made now that keeps
    its own generator (a dataset's shuffle), by TensorFlow's `random_seed.get_seed` rules:

    - a global seed and `op_seed`: both;
    - a global seed only: the global seed and the next op seed of a sequence `set_seed`
      restarts (inside an em.function, the trace's own sequence, from its start), so the
      same program makes the same seeds in every process, though two shuffles differ;
    - `op_seed` only: DEFAULT_GLOBAL_SEED and `op_seed`;
    - neither: (None, None): the caller picks its seed from entropy (nondeterministic).

    Example:
      >>> em.random.set_seed(7)
      >>> first = get_seed(None)
      >>> em.random.set_seed(7)
      >>> get_seed(None) == first, get_seed(3)
      (True, (7, 3))
    """
    glob = _global["seed"]
    if op_seed is not None:
        return (DEFAULT_GLOBAL_SEED if glob is None else glob), int(op_seed)
    if glob is None:
        return None, None
    graphs = active_graphs()
    with _lock:
        if graphs:
            sequence = _op_seeds_by_trace.get(graphs[0]) or \
                _op_seeds_by_trace.setdefault(graphs[0], _sequence(glob))
        else:
            sequence = _global["op_seeds"]
        return glob, sequence.randint(0, _MAXINT32)


def _sequence(seed: int):
    import random  # (~1 ms of `import ember` otherwise: only a program that seeds needs it)
    return random.Random(seed)


def generator_for(seed) -> Generator:
    """The generator a random op with operation seed `seed` (or None) draws from: eagerly
    the global generator or the op seed's; inside a trace the trace's own (see the
    module)."""
    graph = current_graph()
    if graph is not None:
        generator = recording.replayed_generator()  # in a gradient's replay: the forward's
        if generator is None:
            generator = _traced_generator(seed)
        graph.replay_log.drawn.append(generator)
        return generator
    if seed is None:
        return get_global_generator()
    key = (_global["seed"], int(seed))
    if key not in _global["by_op_seed"]:
        made = generator_of(_own_state(state_from_seed(_op_seed_words(int(seed)))))
        with _lock:
            _global["by_op_seed"].setdefault(key, made)
    return _global["by_op_seed"][key]


def _traced_generator(seed) -> Generator:
    """A new generator for this op (an op seed), or the shared one of the outermost trace
    under way: a function traced inside another draws from the enclosing function's, as
    if its body were written there."""
    if seed is not None:
        return _new_traced_generator(int(seed))
    graph = active_graphs()[0]
    with _lock:
        shared = _shared_by_trace.get(graph)
    if shared is None:
        shared = _new_traced_generator(None)
        with _lock:
            shared = _shared_by_trace.setdefault(graph, shared)
    return shared


def _new_traced_generator(op_seed: int | None) -> Generator:
    initial = _initial_state(op_seed)
    made = replica_states(lambda: _own_state(initial)) if replica_states else None
    state, strategy = made if made is not None else (_own_state(initial), None)
    with _lock:
        _traced_states[state] = op_seed
    return generator_of(state, strategy)


def _initial_state(op_seed: int | None) -> np.ndarray:
    """Where a traced op's generator starts under the current global seed: the global
    generator's start (no op seed), or the op seed's generator's."""
    if op_seed is not None:
        return state_from_seed(_op_seed_words(op_seed))
    if _global["seed"] is None:
        return _entropy()
    return state_from_seed(_global["seed"])


def _entropy() -> np.ndarray:
    return np.frombuffer(os.urandom(8 * STATE_SIZE), np.int64).copy()


def _op_seed_words(op_seed: int) -> list:
    glob = _global["seed"]
    return [DEFAULT_GLOBAL_SEED if glob is None else glob, op_seed]
