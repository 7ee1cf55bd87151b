"""`em.random`: random numbers with tf.random's names and signatures, on Philox-4x32-10 as
TensorFlow's (the code is in `ember.frontend`; this module only re-exports).

`Generator` keeps its state in an `em.Variable` (works inside `em.function`); the module
functions follow tf.random.set_seed's rules (`ember.frontend.random_seed`): eagerly they draw
from the global generator (`set_seed`, `get_global_generator`) or from the generator of an
operation seed, traced into an em.function from the trace's own generators, which
`set_seed` restarts too; the `stateless_*` functions are determined by a [2] seed.
"""

import types as _types

from ember.frontend.random_composites import (categorical, normal, shuffle,
                                              stateless_categorical, stateless_dropout,
                                              stateless_shuffle, truncated_normal, uniform)
from ember.frontend.random_generator import Algorithm, Generator
from ember.frontend.random_seed import get_global_generator, set_global_generator, set_seed
from ember.frontend.random_ops import (stateless_normal, stateless_truncated_normal,
                                       stateless_uniform)

experimental = _types.SimpleNamespace(
    Algorithm=Algorithm, Generator=Generator, get_global_generator=get_global_generator,
    set_global_generator=set_global_generator, stateless_shuffle=stateless_shuffle,
    stateless_dropout=stateless_dropout)

__all__ = ["Algorithm", "Generator", "categorical", "experimental", "get_global_generator",
           "normal", "set_global_generator", "set_seed", "shuffle", "stateless_categorical",
           "stateless_normal", "stateless_truncated_normal", "stateless_uniform",
           "truncated_normal", "uniform"]
