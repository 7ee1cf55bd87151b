"""`ShardedVariable` (tf.distribute.experimental.partitioners' result): a variable split
along axis 0 into shards, each a variable on a parameter server (`ParameterServerStrategy`
with a `variable_partitioner`).

Reading it (`read_value`, `numpy`, any operator, em ops taking it as a tensor) concatenates
the shards, also inside an em.function (each shard is captured as a variable). `assign`,
`assign_add` and `assign_sub` split the value into the shards' rows. Gradients and
optimizers work on the shards: `tape.gradient(loss, sharded.variables)` and
`optimizer.apply_gradients(zip(grads, sharded.variables))`; an em.Module holding one
lists its shards in `variables` / `trainable_variables`. The first `rows % shards` shards
hold one row more than the others (as TF and `numpy.array_split`).
"""

from __future__ import annotations

from ember.frontend.shape import TensorShape
from ember.frontend.object_identity import TensorRef
from ember.frontend.tensor import Tensor, convert_to_tensor
from ember.frontend.variables import Variable, _operator, unhashable_error  # reads, then op


class ShardedVariable:
    """A variable split along axis 0 into `variables` (see the module).

    Example:
      >>> import ember as em
      >>> resolver = em.distribute.experimental.create_in_process_cluster(1, 2)
      >>> strategy = em.distribute.experimental.ParameterServerStrategy(
      ...     resolver, em.distribute.experimental.partitioners.FixedShardsPartitioner(2))
      >>> with strategy.scope():
      ...     v = em.Variable([[1.0], [2.0], [3.0]], name="table")
      >>> [s.shape.as_list() for s in v.variables], v.numpy().ravel().tolist()
      ([[2, 1], [1, 1]], [1.0, 2.0, 3.0])
    """

    __array_priority__ = 100

    def __init__(self, variables: list, name: str = "ShardedVariable"):
        variables = list(variables)
        if not variables or not all(isinstance(v, Variable) for v in variables):
            raise TypeError(f"ShardedVariable: expected a non-empty list of em.Variables, got "
                            f"{variables!r}")
        first = variables[0]
        for v in variables:
            dims = v.shape.as_list()
            if v.dtype is not first.dtype:
                raise ValueError(f"ShardedVariable {name}: the shards have different dtypes "
                                 f"({first.dtype.name} and {v.dtype.name})")
            if dims is None or not dims or None in dims or \
                    dims[1:] != first.shape.as_list()[1:]:
                raise ValueError(f"ShardedVariable {name}: every shard must have a known shape "
                                 "of rank >= 1 and the same dims after the first; got "
                                 f"{[s.shape for s in variables]}")
        self._variables = variables
        self._name = name
        self._rows = [v.shape.as_list()[0] for v in variables]

    @property
    def variables(self) -> list:
        """The shards, in order (each a variable on one parameter server)."""
        return list(self._variables)

    @property
    def _ember_shards(self) -> list:  # em.Module's walk finds the shards (module.py)
        return list(self._variables)

    @property
    def name(self) -> str:
        return f"{self._name}:0"

    @property
    def dtype(self):
        return self._variables[0].dtype

    @property
    def shape(self) -> TensorShape:
        rest = self._variables[0].shape.as_list()[1:]
        return TensorShape([sum(self._rows)] + rest)

    @property
    def trainable(self) -> bool:
        return self._variables[0].trainable

    def read_value(self) -> Tensor:
        """The shards concatenated along axis 0."""
        from ember.frontend.ops import concat
        values = [v.read_value() for v in self._variables]
        return values[0] if len(values) == 1 else concat(values, axis=0)

    value = read_value

    def numpy(self):
        return self.read_value().numpy()

    def _numpy_array(self) -> np.ndarray:
        return self.read_value()._numpy_array()

    def _as_tensor(self) -> Tensor:
        return self.read_value()

    def __array__(self, dtype=None, copy=None):
        return self.read_value().__array__(dtype, copy)

    def _split(self, value, where: str) -> list:
        value = convert_to_tensor(value, dtype_hint=self.dtype)
        want = self.shape
        if value.dtype is not self.dtype:
            raise TypeError(f"ShardedVariable.{where}: {self.name} has dtype "
                            f"{self.dtype.name}, the value {value.dtype.name}")
        if not value.shape.is_compatible_with(want):
            raise ValueError(f"ShardedVariable.{where}: {self.name} has shape {want}, the "
                             f"value {value.shape}")
        pieces, start = [], 0
        for rows in self._rows:
            pieces.append(value[start:start + rows])
            start += rows
        return pieces

    def assign(self, value, read_value: bool = True):
        """Writes each shard's rows of `value` (of the variable's whole shape)."""
        for shard, piece in zip(self._variables, self._split(value, "assign")):
            shard.assign(piece)
        return self

    def assign_add(self, delta, read_value: bool = True):
        for shard, piece in zip(self._variables, self._split(delta, "assign_add")):
            shard.assign_add(piece)
        return self

    def assign_sub(self, delta, read_value: bool = True):
        for shard, piece in zip(self._variables, self._split(delta, "assign_sub")):
            shard.assign_sub(piece)
        return self

    def __len__(self) -> int:
        return sum(self._rows)

    def __repr__(self) -> str:
        devices = [getattr(v, "device", "") for v in self._variables]
        return (f"<ember.ShardedVariable '{self.name}' shape={self.shape} "
                f"dtype={self.dtype.name} shards={len(self._variables)} devices={devices}>")

    def __hash__(self):  # `==` is elementwise, as a Variable's
        raise unhashable_error(self)

    def ref(self) -> TensorRef:
        """A hashable reference to this variable (by identity), as `Variable.ref`."""
        return TensorRef(self)

    experimental_ref = ref


for _name in ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__",
              "__truediv__", "__rtruediv__", "__pow__", "__rpow__", "__matmul__",
              "__rmatmul__", "__neg__", "__abs__", "__getitem__", "__lt__", "__le__", "__gt__",
              "__ge__", "__eq__", "__ne__"):
    setattr(ShardedVariable, _name, _operator(_name))
