"""The op spec: one Python class per op, the single source of truth for that op.

A spec carries the op's name, operand names, attributes (kind + default), traits, result-type
inference and a numpy reference kernel; its docstring has a summary and an `Example:` in IR.
The tracer emits specs, eager mode runs their kernels, the verifier re-runs their inference,
constant folding calls their kernels and the IRDL definition is generated from them — the
same idea as JAX's per-primitive rule tables or ODS records in upstream MLIR.
"""

from __future__ import annotations

import dataclasses
import enum
from typing import Any, Callable, ClassVar

import numpy as np

from ember.dialects.ember import dtypes
from ember.dialects.ember.errors import EmberError, EmberWarning  # noqa: F401 (re-exported)
from ember.dialects.ember.types import IRType, ResourceType, ShapeError, TensorType


class Trait(enum.Enum):
    PURE = "pure"                      # no side effects: may be folded, merged, hoisted, erased
    COMMUTATIVE = "commutative"        # f(a, b) == f(b, a)
    ELEMENTWISE = "elementwise"        # result[i] depends only on operands[i] (with broadcasting)
    SIDE_EFFECTING = "side_effecting"  # reads or writes state or the outside world: keep order
    RANDOM = "random"                  # pure given its seed operand


class Total(enum.Enum):
    """When an op cannot fail at run time, for operand types the verifier accepted.

    The verifier runs `infer` on the types, so shape checks on static dims happened at
    compile time; a `?` dim is checked only when the op runs, and some kernels check values
    (integer division by zero, an index out of range). Passes that run an op where it might
    not have run (LICM hoisting out of a loop that may run zero times) move only total ops.
    """

    NEVER = "never"    # may fail whatever the types (the default: nothing declared)
    STATIC = "static"  # total when every operand type is static
    RANKED = "ranked"  # total when every operand's rank is known (axes were checked)
    ALWAYS = "always"  # total for any operand types it verified (no dims to agree, no checks)


class OpError(EmberError):
    """An op was given operands or attributes it does not accept (MLIR-style message)."""

    where: str | None = None  # the user's `file:line` the message names, once it does

    def __init__(self, op_name: str, message: str):
        self.op_name = op_name
        self.detail = message
        self.op_message = f"'{op_name}' op {message}"  # the message but for `where`
        super().__init__(self.op_message)

    def located(self, where: str) -> "OpError":
        """This error naming the user's line `where` (`file:line`), as errors raised eagerly,
        while tracing, by the interpreter and by compiled code all do; itself if it names
        one already (an op of a callback inside an op)."""
        if self.where is not None:
            return self
        error = type(self).__new__(type(self))  # (a subclass may take other arguments)
        error.__dict__.update(self.__dict__)
        error.detail, error.where = f"{self.detail} (at {where})", where
        error.args = (f"'{self.op_name}' op {error.detail}",)
        return error

    def __reduce__(self):  # (pickle would call __init__ with the message alone)
        return _rebuilt, (type(self), self.args, self.__dict__)


def _rebuilt(cls: type, args: tuple, state: dict) -> OpError:
    """An OpError sent through pickle (to or from another process) as it was."""
    error = cls.__new__(cls)
    error.args = args
    error.__dict__.update(state)
    return error


class OpTypeError(OpError, TypeError):
    """Wrong dtypes or operand kinds."""


class OpShapeError(OpError, ValueError):
    """Incompatible shapes."""


class OpAttributeError(OpError, ValueError):
    """A missing, malformed or out-of-range attribute."""


class InvalidArgumentError(OpError, ValueError):
    """An op's kernel rejected its input values (integer division by zero, index out of range)."""


class AssertionFailedError(InvalidArgumentError, AssertionError):
    """An `ember.assert` found a false element (AutoGraph's `assert` on a tensor): an
    `InvalidArgumentError`, as in TensorFlow, and an `AssertionError`, as the same
    `assert` raises in Python."""


for _error in (OpError, OpTypeError, OpShapeError, OpAttributeError, InvalidArgumentError,
               AssertionFailedError):
    _error.__module__ = "ember"  # public as em.OpTypeError etc.; tracebacks show that name

_REQUIRED = object()


@dataclasses.dataclass(frozen=True)
class Attr:
    """An attribute slot of an op: its kind and default (no default means required)."""

    kind: str  # one of ATTR_KINDS
    default: Any = _REQUIRED
    doc: str = ""

    @property
    def required(self) -> bool:
        return self.default is _REQUIRED


# kind -> (IRDL base constraint, description for error messages)
ATTR_KINDS: dict[str, tuple[str, str]] = {
    "i64": ('irdl.base "#builtin.integer"', "an integer (e.g. `1 : i64`)"),
    "i64_array": ('irdl.base "#builtin.dense_array"', "an `array<i64: ...>`"),
    "bool": ('irdl.base "#builtin.integer"', "a bool (`true` or `false`)"),
    "f64": ('irdl.base "#builtin.float"', "a float (e.g. `1.0 : f64`)"),
    "str": ('irdl.base "#builtin.string"', 'a string (e.g. `"SAME"`)'),
    "dtype": ('irdl.base "#builtin.type"', "an ember element type (e.g. `f32`)"),
    "elements": ("irdl.any", "a dense elements attribute (`dense<...> : tensor<...>`)"),
}


def _check_python_attr(op: str, name: str, kind: str, value):
    """Normalises a Python attribute value, raising OpAttributeError if it has the wrong kind."""
    if kind == "elements":  # the most frequent (every constant): nothing to check
        return np.asarray(value)

    def bad() -> OpAttributeError:  # built only when raised: the message formats `value`
        return OpAttributeError(op, f"attribute '{name}' expects {ATTR_KINDS[kind][1]}, "
                                    f"got {value!r}")

    if kind == "i64":
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
            raise bad()
        return int(value)
    if kind == "i64_array":
        try:
            items = tuple(value)
        except TypeError:
            raise bad() from None
        if not all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in items):
            raise bad()
        return tuple(int(v) for v in items)
    if kind == "bool":
        if not isinstance(value, (bool, np.bool_)):
            raise bad()
        return bool(value)
    if kind == "f64":
        if isinstance(value, bool) or not isinstance(value, (int, float, np.number)):
            raise bad()
        return float(value)
    if kind == "str":
        if not isinstance(value, str):
            raise bad()
        return value
    if kind == "dtype":
        try:
            return dtypes.as_dtype(value)
        except TypeError:
            raise bad() from None
    raise AssertionError(kind)



class Op:
    """Base of op specs. Subclasses set the class variables and override `infer`/`reference`.

    `infer(*operand_types, **attrs)` returns the result type (or a tuple of them; `()` for
    ops without results) and raises OpError subclasses. `reference(*arrays, **attrs)` is the
    numpy kernel: its results are cast to the inferred dtypes by the caller.
    """

    name: ClassVar[str]
    operands: ClassVar[tuple[str, ...]] = ()
    resource_operands: ClassVar[frozenset[str]] = frozenset()
    variadic: ClassVar[bool] = False  # the last operand takes any number of values
    attrs: ClassVar[dict[str, Attr]] = {}
    results: ClassVar[tuple[str, ...]] = ("output",)
    traits: ClassVar[frozenset[Trait]] = frozenset({Trait.PURE})
    upstream: ClassVar[bool] = False  # an upstream op (e.g. tensor.concat) ember emits and runs
    uses_values: ClassVar[bool] = False  # `infer` also receives known operand values
    reads_shapes_only: ClassVar[bool] = False  # the kernel reads operand shapes, not values
    uses_dims: ClassVar[bool] = False  # ... and `?` dims as symbols (dialects/ember/partial.py)
    total_when: ClassVar[Total] = Total.NEVER  # see `total`
    family: ClassVar[str] = ""
    reference: ClassVar[Callable]

    @classmethod
    def infer(cls, *operand_types: IRType, **attrs):
        raise OpError(cls.name, "has no type inference rule")

    @classmethod
    def total(cls, operand_types: tuple, attrs: dict, values: tuple) -> bool:
        """Whether the op cannot fail at run time for any operand values of these (verified)
        types. `values` holds each operand's value where a constant gives it, else None.

        The rule is `total_when`; specs whose totality depends on more (broadcasting of
        dynamic dims, a constant divisor) override this. Undeclared ops may fail.
        """
        if cls.total_when is Total.ALWAYS:
            return True
        if cls.total_when is Total.RANKED:
            return all(_value_type(t).rank is not None for t in operand_types)
        return cls.total_when is Total.STATIC and all_static(operand_types)

    # -- helpers shared by subclasses --------------------------------------------------------

    @classmethod
    def error(cls, message: str, kind: type = OpShapeError) -> OpError:
        return kind(cls.name, message)

    @classmethod
    def has(cls, trait: Trait) -> bool:
        return trait in cls.traits

    @classmethod
    def summary(cls) -> str:
        return (cls.__doc__ or "").strip().splitlines()[0] if cls.__doc__ else ""

    @classmethod
    def example(cls) -> str:
        """The IR after `Example:` in the docstring (dedented)."""
        doc = cls.__doc__ or ""
        if "Example:" not in doc:
            return ""
        lines = doc.split("Example:", 1)[1].splitlines()
        body = [ln.strip() for ln in lines if ln.strip()]
        return "\n".join(body)

    @classmethod
    def normalize_attrs(cls, attrs: dict) -> dict:
        """Checks attribute names and kinds and fills in defaults."""
        unknown = set(attrs) - set(cls.attrs)
        if unknown:
            raise OpAttributeError(cls.name, f"has no attribute {sorted(unknown)[0]!r}; "
                                   f"expected {sorted(cls.attrs) or 'none'}")
        out = {}
        for name, slot in cls.attrs.items():
            if name in attrs:
                out[name] = _check_python_attr(cls.name, name, slot.kind, attrs[name])
            elif slot.required:
                raise OpAttributeError(cls.name, f"requires attribute '{name}'")
            else:
                out[name] = slot.default
        return out

    @classmethod
    def infer_types(cls, operand_types: tuple, attrs: dict, values=None) -> tuple[IRType, ...]:
        """Checks operand kinds, then runs `infer`; always returns a tuple of result types.

        `values` optionally gives each operand's value (numpy) where it is known, e.g. when it
        comes from a constant; ops with `uses_values` infer static shapes from them (the way an
        MLIR shape function matches constant operands).
        """
        if not cls.variadic and len(operand_types) != len(cls.operands):
            raise OpTypeError(cls.name, f"expects {len(cls.operands)} operands "
                              f"({', '.join(cls.operands)}), got {len(operand_types)}")
        names = list(cls.operands)
        if cls.variadic:
            names = names[:-1] + names[-1:] * (len(operand_types) - len(names) + 1)
        for name, t in zip(names, operand_types):
            want_resource = name in cls.resource_operands
            if want_resource != isinstance(t, ResourceType):
                what = "a variable resource" if want_resource else "a tensor"
                raise OpTypeError(cls.name, f"operand '{name}' must be {what}, got {t}")
        try:
            if cls.uses_values:
                known = tuple(values) if values is not None else (None,) * len(operand_types)
                result = cls.infer(*operand_types, values=known, **attrs)
            else:
                result = cls.infer(*operand_types, **attrs)
        except ShapeError as e:  # e.g. a result of 2**64 elements: no tensor can have it
            raise InvalidArgumentError(cls.name, f"result {e}") from None
        if result is None:
            return ()
        return result if isinstance(result, tuple) else (result,)


REGISTRY: dict[str, type[Op]] = {}


def register(cls: type[Op]) -> type[Op]:
    """Class decorator: adds an op spec to the registry (names must be unique)."""
    if cls.name in REGISTRY:
        raise ValueError(f"op {cls.name} registered twice")
    REGISTRY[cls.name] = cls
    return cls


# -- small inference helpers ------------------------------------------------------------------

def _value_type(t: IRType) -> TensorType:
    return t.value if isinstance(t, ResourceType) else t


def all_static(types) -> bool:
    """Whether every type (a variable's value type for a resource) has a static shape."""
    return all(_value_type(t).is_static for t in types)


def broadcast_total(types) -> bool:
    """Whether broadcasting these shapes cannot fail at run time: ranks are known and in
    every position (aligned from the right) a `?` dim meets only dims of static size 1 and
    the static dims other than 1 agree (specialising to a call's shapes can give an op
    static shapes that do not broadcast, in a loop that may never run)."""
    shapes = [t.shape for t in types]
    if any(s is None for s in shapes):
        return False
    rank = max((len(s) for s in shapes), default=0)
    for i in range(1, rank + 1):
        dims = [s[-i] for s in shapes if len(s) >= i]
        if None in dims and sum(1 for d in dims if d != 1) > 1:
            return False
        if len({d for d in dims if d is not None and d != 1}) > 1:
            return False
    return True


def require_dtype(op: type[Op], t: TensorType, allowed, what: str, operand: str = "operand"):
    """Raises OpTypeError unless `t.dtype` is in `allowed`."""
    if t.dtype not in allowed:
        raise OpTypeError(op.name, f"{operand} of type {t} must have {what} elements")


def same_dtype(op: type[Op], *types: TensorType) -> dtypes.DType:
    first = types[0].dtype
    for t in types[1:]:
        if t.dtype is not first:
            listed = " and ".join(str(x) for x in types)
            raise OpTypeError(op.name, f"operand types {listed} have different element types; "
                              "Ember never converts dtypes implicitly: cast one operand "
                              "(em.cast in Python, ember.cast in IR)")
    return first


def normalize_axis(op: type[Op], axis: int, rank: int, what: str = "axis") -> int:
    if not -rank <= axis < rank:
        raise OpAttributeError(op.name, f"{what} {axis} is out of range for rank {rank}")
    return axis % rank


def require_rank(op: type[Op], t: TensorType, what: str = "operand") -> int:
    if t.rank is None:
        raise OpShapeError(op.name, f"{what} of type {t} must be ranked here: give it a "
                           "known rank (a shape in the input_signature's TensorSpec, or "
                           "em.reshape to the dims you expect)")
    return t.rank
