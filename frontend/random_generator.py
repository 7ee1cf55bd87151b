"""`em.random.Generator`: a stateful Philox generator whose state is an `em.Variable`, as
`tf.random.Generator` (alg="philox").

The state is TensorFlow's: an int64 Variable `[counter low, counter high, key]`. Every draw
reads it, computes the numbers (`ember.philox_random`) and advances the counter by
256 * (number of outputs), as TensorFlow's `UpdateVariableAndFill_Philox`; so a
`Generator.from_seed(s)` gives TensorFlow's numbers for the same seed and calls, and inside an
`em.function` every call advances it (the read and the write are variable ops that run on
every call), eagerly and compiled alike.

`em.random.uniform` & co. draw from generators chosen by seed (random_seed.py): eagerly the
global generator, which `em.random.set_seed(s)` replaces with `Generator.from_seed(s)`
(TensorFlow's global seed does not reseed its global generator: Ember's does, so a seeded
program repeats), and inside an em.function generators of the trace's own.

Under em.distribute, as TensorFlow's: a generator made outside any strategy's scope is one
stream the replicas of `strategy.run` share, taking turns; one made under a
MirroredStrategy's scope (or inside its `run`) gives each replica a stream of its own: its
state is mirrored (every replica advances its copy alike) and a replica draws with the
key hashed with its replica id, one Philox block of counter (replica id, 0) under the key
(TensorFlow's `_preprocess_key`), so a seeded generator stays deterministic; in the
cross-replica context the key is used as it is (runtime/distribute/generators.py).
"""

from __future__ import annotations

import contextlib
import enum
import os

import numpy as np

from ember.dialects.ember import dtypes
from ember.frontend import ops
from ember.frontend import random_ops as R
from ember.frontend.math_ops import cast
from ember.frontend.tensor import Tensor, convert_to_tensor
from ember.frontend.trace_scope import current_graph
from ember.frontend.variables import Variable

STATE_SIZE = 3  # TensorFlow's PHILOX_STATE_SIZE: two counter words and a key
RESERVED = 256  # counter steps per output (TensorFlow's kReservedSamplesPerOutput)

# em.distribute's hooks (set by ember.runtime.distribute.generators: the frontend imports no
# runtime). `strategy_of_new()`: the strategy a generator made now belongs to (None: none,
# its replicas share its stream). `replica_of(strategy)`: the id of the replica of
# `strategy` drawing, an int64 scalar tensor that is -1 outside its replicas (a trace
# reads it at each call), or None where no replica draws.
strategy_of_new = None
replica_of = None


class Algorithm(enum.Enum):
    """The RNG algorithms (tf.random.Algorithm); Ember implements Philox."""
    PHILOX = 1
    THREEFRY = 2


def _check_alg(alg) -> int:
    if alg is None or alg in ("philox", Algorithm.PHILOX, 1):
        return Algorithm.PHILOX.value
    raise ValueError(f"em.random.Generator: algorithm {alg!r} is not supported; Ember "
                     "implements Philox only (alg='philox')")


def _to_int64(n: int) -> int:
    n &= (1 << 64) - 1
    return n - (1 << 64) if n >> 63 else n


def state_from_seed(seed) -> np.ndarray:
    """TensorFlow's `create_rng_state(seed, 'philox')`: a Python int is cut into 64-bit
    words, low first; a vector is truncated to 3 words or padded with zeros on the left."""
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
        seed, words = int(seed), []
        for _ in range(STATE_SIZE):
            words.append(_to_int64(seed))
            seed >>= 64
        return np.array(words, np.int64)
    arr = np.asarray(seed.numpy() if isinstance(seed, Tensor) else seed)
    if arr.dtype.kind not in "iu":
        raise TypeError(f"em.random.Generator.from_seed: seed must be an integer or a "
                        f"vector of integers, got {seed!r}")
    if arr.ndim > 1:
        raise ValueError(f"em.random.Generator.from_seed: seed should have one dimension; "
                         f"got shape {list(arr.shape)}")
    words = [_to_int64(int(v)) for v in arr.reshape(-1)[:STATE_SIZE]]
    return np.array([0] * (STATE_SIZE - len(words)) + words, np.int64)


class Generator:
    """A random number generator with Philox state in an `em.Variable`
    (tf.random.Generator).

    Example:
      >>> import ember as em
      >>> g = em.random.Generator.from_seed(1234)
      >>> g.uniform([2]).shape
      TensorShape([2])
    """

    def __init__(self, copy_from=None, state=None, alg=None):
        self._alg = _check_alg(alg)
        if copy_from is not None:
            if state is not None:
                raise ValueError("em.random.Generator: give copy_from or state, not both")
            state = copy_from.state.read_value()
        if state is None:
            raise ValueError("em.random.Generator needs a state: use Generator.from_seed, "
                             "from_non_deterministic_state or from_state")
        self._strategy = strategy_of_new() if strategy_of_new is not None else None
        self._state_var = Variable(_checked_state(state), trainable=False, name="rng_state",
                                   dtype=dtypes.int64)
        if not isinstance(self._state_var, Variable):
            raise ValueError(
                "em.random.Generator: its state would be sharded (a ShardedVariable), but "
                "a Philox state is one value: make the ParameterServerStrategy's "
                "variable_partitioner leave variables of 3 elements whole (None, or a "
                "MinSizePartitioner with a large enough min_shard_bytes)")

    @classmethod
    def from_seed(cls, seed, alg=None) -> "Generator":
        """A generator whose state is made from `seed` (an int or a vector of ints)."""
        return cls(state=state_from_seed(seed), alg=alg)

    @classmethod
    def from_non_deterministic_state(cls, alg=None) -> "Generator":
        """A generator seeded from the operating system's entropy."""
        return cls(state=np.frombuffer(os.urandom(8 * STATE_SIZE), np.int64).copy(), alg=alg)

    @classmethod
    def from_state(cls, state, alg) -> "Generator":
        """A generator with this [3] int64 state."""
        return cls(state=state, alg=alg)

    @classmethod
    def from_key_counter(cls, key, counter, alg) -> "Generator":
        """A generator from a [1] key and a [2] counter (TensorFlow's layout)."""
        key, counter = (convert_to_tensor(v, dtype=dtypes.int64) for v in (key, counter))
        return cls(state=ops.concat([counter, key], 0), alg=alg)

    @property
    def state(self) -> Variable:
        """The int64 [3] Variable holding [counter low, counter high, key]."""
        return self._state_var

    @property
    def algorithm(self) -> int:
        return self._alg

    @property
    def key(self) -> Tensor:
        """The key word of the state (a scalar int64)."""
        return self._state_var.read_value()[-1]

    def reset(self, state) -> None:
        """Replaces the state."""
        self._state_var.assign(_checked_state(state))

    def reset_from_seed(self, seed) -> None:
        self.reset(state_from_seed(seed))

    def reset_from_key_counter(self, key, counter) -> None:
        key, counter = (convert_to_tensor(v, dtype=dtypes.int64) for v in (key, counter))
        self.reset(ops.concat([counter, key], 0))

    def skip(self, delta) -> None:
        """Advances the state as drawing `delta` numbers would."""
        steps = ops.multiply(convert_to_tensor(delta, dtype=dtypes.int64),
                             convert_to_tensor(RESERVED, dtype=dtypes.int64))
        with self._advancing():
            self._state_var.assign(R.advance(self._state_var.read_value(), steps))

    def _draw(self, shape, where: str, make):
        """`make(state, shape operand)` on the current state, which then advances."""
        shape = R.shape_operand(shape, where)
        count = ops.reduce_prod(cast(shape, dtypes.int64))
        steps = ops.multiply(count, convert_to_tensor(RESERVED, dtype=dtypes.int64))
        with self._advancing():
            state = self._state_var.read_value()
            out = make(self._replica_state(state), shape)
            self._state_var.assign(R.advance(state, steps))
        return out

    def _replica_state(self, state) -> Tensor:
        """The state a replica of this generator's strategy draws from: its key hashed
        with the replica id (see the module); outside the replicas, `state`."""
        replica = None
        if self._strategy is not None and replica_of is not None:
            replica = replica_of(self._strategy)
        if replica is None:
            return state
        zero = convert_to_tensor(0, dtype=dtypes.int64)
        hashed = R.draw(ops.stack([replica, zero, state[2]]),
                        Tensor(np.array([1], np.int64)), "bits", dtypes.int64)[0]
        key = ops.where(ops.greater_equal(replica, zero), hashed, state[2])
        return ops.stack([state[0], state[1], key])

    def _advancing(self):
        """Eagerly, the state's lock around a read and its advance: threads drawing from one
        generator (the replicas of strategy.run) take turns and never draw the same
        numbers. Traced, nothing: a compiled call holds the locks of the variables it
        writes while it runs (runtime/executor.py)."""
        if current_graph() is not None:
            return contextlib.nullcontext()
        return self._state_var.handle.lock

    def uniform(self, shape, minval=0, maxval=None, dtype=dtypes.float32, name=None):
        """Uniform numbers in [minval, maxval): floats (maxval defaults to 1) or integers
        (`maxval` required; both bounds None gives the full range)."""
        del name
        where = "em.random.Generator.uniform"
        R.check_uniform_args(minval, maxval, dtype, where)  # before the state is read
        return self._draw(shape, where, lambda s, sh: R.uniform_from(
            s, sh, minval, maxval, dtype, where))

    def uniform_full_int(self, shape, dtype=dtypes.int64, name=None):
        """Integers over the whole range of `dtype` (int32 or int64)."""
        del name
        where = "em.random.Generator.uniform_full_int"
        dtype = R.check_dtype(dtype, R.INTS, where)
        return self._draw(shape, where, lambda s, sh: R.draw(s, sh, "bits", dtype))

    def normal(self, shape, mean=0.0, stddev=1.0, dtype=dtypes.float32, name=None):
        """Normal numbers (Box-Muller, as TensorFlow's)."""
        del name
        where = "em.random.Generator.normal"
        R.check_dtype(dtype, R.FLOATS, where)
        return self._draw(shape, where, lambda s, sh: R.normal_from(
            s, sh, mean, stddev, dtype, where))

    def truncated_normal(self, shape, mean=0.0, stddev=1.0, dtype=dtypes.float32,
                         name=None):
        """Normal numbers within 2 stddev of `mean` (values beyond are redrawn)."""
        del name
        where = "em.random.Generator.truncated_normal"
        R.check_dtype(dtype, R.FLOATS, where)
        return self._draw(shape, where, lambda s, sh: R.normal_from(
            s, sh, mean, stddev, dtype, where, "truncated_normal"))

    def make_seeds(self, count=1) -> Tensor:
        """`count` seeds for the stateless functions: an int64 [2, count] tensor (column i
        is one seed), as TensorFlow's."""
        keys = self.uniform_full_int([count], dtypes.int64)
        return ops.stack([keys, ops.zeros_like(keys)])

    def split(self, count=1) -> list:
        """`count` new generators whose keys this one draws (state [0, 0, key]). It makes
        Variables: inside an em.function only on its first call, as TensorFlow."""
        keys = self.uniform_full_int([count], dtypes.int64)
        zero = convert_to_tensor(0, dtype=dtypes.int64)
        return [Generator(state=ops.stack([zero, zero, keys[i]]), alg=self._alg)
                for i in range(int(count))]


def _checked_state(state) -> Tensor:
    state = convert_to_tensor(state, dtype_hint=dtypes.int64)
    if state.dtype is not dtypes.int64:
        state = cast(state, dtypes.int64)
    if state.shape.rank is not None and state.shape.as_list() not in ([STATE_SIZE], [None]):
        raise ValueError(f"em.random.Generator: a Philox state has shape [{STATE_SIZE}] "
                         f"(counter low, counter high, key), got {state.shape}")
    return state


def generator_of(state: Variable, strategy=None) -> Generator:
    """A Philox generator drawing from (and advancing) the existing int64 [3] Variable
    `state`, which its owner keeps (random_seed.py's states); `strategy`: the
    MirroredStrategy whose replicas hash the key with their id (the state per replica)."""
    if state.dtype is not dtypes.int64 or state.shape.as_list() != [STATE_SIZE]:
        raise ValueError(f"a Philox state Variable is int64 [{STATE_SIZE}], got {state!r}")
    generator = Generator.__new__(Generator)
    generator._alg, generator._state_var = Algorithm.PHILOX.value, state
    generator._strategy = strategy
    return generator
