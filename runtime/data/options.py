"""`em.data.Options` (tf.data.Options), `Dataset.with_options` and the auto-shard policies.

Options are set on a pipeline with `with_options` (an `OptionsDataset` node, anywhere in the
chain) and read back with `Dataset.options()`, which merges every node's options from the
innermost out: a field set further out wins, a field never set keeps its default.
"""

import enum

from ember.runtime.data.transforms import _Unary


class AutoShardPolicy(enum.IntEnum):
    """How a multi-worker strategy splits a dataset across workers
    (`tf.data.experimental.AutoShardPolicy`): see `ember.runtime.data.autoshard`."""

    OFF = -1
    AUTO = 0
    FILE = 1
    DATA = 2
    HINT = 3


class _OptionsGroup:
    """Options with declared fields and defaults; remembers which fields were set."""

    _defaults: dict = {}

    def __init__(self, **values):
        object.__setattr__(self, "_set", {})
        for name, value in values.items():
            setattr(self, name, value)

    def __getattr__(self, name):
        if name in self._defaults:
            return self._set.get(name, self._defaults[name])
        raise AttributeError(f"{type(self).__name__} has no option {name!r}; the options "
                             f"are {', '.join(sorted(self._defaults))}")

    def __setattr__(self, name, value):
        if name not in self._defaults:
            raise AttributeError(f"Cannot set the property {name} on {type(self).__name__}; "
                                 f"the options are {', '.join(sorted(self._defaults))}")
        self._set[name] = self._check(name, value)

    def _check(self, name, value):
        return value

    def _merge(self, other):
        for name, value in other._set.items():
            mine = self._set.get(name)
            if isinstance(mine, _OptionsGroup):
                mine._merge(value)
            else:
                self._set[name] = _copy(value)

    def __eq__(self, other):
        return type(self) is type(other) and all(
            getattr(self, n) == getattr(other, n) for n in self._defaults)

    def __repr__(self):
        fields = ", ".join(f"{n}={getattr(self, n)!r}" for n in sorted(self._defaults))
        return f"{type(self).__name__}({fields})"


def _copy(value):
    if isinstance(value, _OptionsGroup):
        clone = type(value)()
        clone._merge(value)
        return clone
    return value


class DistributeOptions(_OptionsGroup):
    """`tf.data.experimental.DistributeOptions`: `auto_shard_policy` (default AUTO) and
    `num_devices` (default None)."""

    _defaults = {"auto_shard_policy": AutoShardPolicy.AUTO, "num_devices": None}

    def _check(self, name, value):
        if name == "auto_shard_policy":
            try:
                return AutoShardPolicy(value)
            except ValueError:
                raise ValueError(f"auto_shard_policy must be an "
                                 f"em.data.experimental.AutoShardPolicy "
                                 f"({', '.join(p.name for p in AutoShardPolicy)}), "
                                 f"got {value!r}") from None
        if value is not None and (not isinstance(value, int) or value <= 0):
            raise ValueError(f"num_devices must be a positive int or None, got {value!r}")
        return value


class OptimizationOptions(_OptionsGroup):
    """`tf.data.experimental.OptimizationOptions`: the static rewrites of
    runtime/data/optimize.py, each on by default and never changing a batch's values:
    `map_vectorization` (`map(f).batch(n)` as one compiled call of f per batch when f is
    elementwise) and `source_batching` (`batch(n)` over `from_tensor_slices`/`range`, through
    `take`/`skip`/`shard`, as one slice per batch)."""

    _defaults = {"map_vectorization": True, "source_batching": True}

    def _check(self, name, value):
        if not isinstance(value, bool):
            raise TypeError(f"experimental_optimization.{name} must be a bool, got {value!r}")
        return value


class Options(_OptionsGroup):
    """`tf.data.Options`: `experimental_distribute` (a `DistributeOptions`),
    `experimental_optimization` (an `OptimizationOptions`) and `deterministic` (None: the
    default order-keeping behaviour).

    Example:
      >>> import ember as em
      >>> options = em.data.Options()
      >>> options.experimental_distribute.auto_shard_policy = (
      ...     em.data.experimental.AutoShardPolicy.DATA)
      >>> ds = em.data.Dataset.range(4).with_options(options)
      >>> ds.options().experimental_distribute.auto_shard_policy.name
      'DATA'
    """

    _defaults = {"experimental_distribute": None, "deterministic": None,
                 "experimental_optimization": None}

    def __init__(self, **values):
        super().__init__(**values)
        if "experimental_distribute" not in self._set:
            self._set["experimental_distribute"] = DistributeOptions()
        if "experimental_optimization" not in self._set:
            self._set["experimental_optimization"] = OptimizationOptions()

    def _check(self, name, value):
        if name == "experimental_optimization" and not isinstance(value, OptimizationOptions):
            raise TypeError(f"experimental_optimization must be an OptimizationOptions, got "
                            f"{type(value).__name__}")
        if name == "experimental_distribute" and not isinstance(value, DistributeOptions):
            raise TypeError(f"experimental_distribute must be a DistributeOptions, got "
                            f"{type(value).__name__}")
        if name == "deterministic" and value is not None and not isinstance(value, bool):
            raise TypeError(f"deterministic must be a bool or None, got {value!r}")
        return value


class OptionsDataset(_Unary):
    def __init__(self, source, options):
        super().__init__(source)
        if not isinstance(options, Options):
            raise TypeError(f"Dataset.with_options: options must be an em.data.Options, got "
                            f"{type(options).__name__} {options!r}")
        self._options = _copy(options)

    def _iterate(self):
        return self._source._iterate()

    def _rows(self):
        return self._source._rows()


def pipeline_nodes(dataset) -> list:
    """Every node of `dataset`'s pipeline once, each after the datasets it reads from."""
    order, seen = [], set()

    def visit(node):
        if id(node) in seen:
            return
        seen.add(id(node))
        for source in node._inputs():
            visit(source)
        order.append(node)

    visit(dataset)
    return order


def merged_options(dataset) -> Options:
    """The options of every OptionsDataset in `dataset`'s pipeline, merged inside out."""
    merged = Options()
    for node in pipeline_nodes(dataset):
        if isinstance(node, OptionsDataset):
            merged._merge(node._options)
    return merged
