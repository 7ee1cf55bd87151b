"""Every op compiled for the CPU against its reference kernel (eager dispatch), on the
operands of the eager-vs-numpy table: NaN, inf and -0.0 among the floats, broadcasting
operands, empty tensors (reduce_max over a 2x0 input, reduce_all over 0x2, shape of 2x0x5).

Each op runs three ways:
- static: a function whose arguments have the operands' static types;
- dynamic: the same function with every dim `?`, compiled for the operands' shapes (the
  runtime's path for a relaxed trace: specialise, refine shapes, lower);
- empty: elementwise ops again with dim 0 of every full-size operand set to 0.

Ops whose result shape depends on operand values (fill, range, reshape's shape, ...) take
those operands as constants inside the function, as a trace with Python values would.
Integer and boolean results must be bit-exact; floats within 2e-6 relative (the vectorised
transcendentals are within 2 ulp), with NaN where the reference has NaN.
"""

import sys

import numpy as np
import pytest
from mlir import ir

from ember.backends.cpu.compiler import NotCompilable, compile_function
from ember.dialects.ember import REGISTRY, TensorType, creation, dtypes
from ember.dialects.ember.base import Trait
from ember.dialects.ember.builder import build_function, emit
from ember.dialects.ember.irdl import default_context
from ember.frontend.dispatch import execute
from ember.frontend.tensor import Tensor

sys.path.insert(0, __file__.rsplit("/tests/", 1)[0] + "/tests/dialects")
from test_eager_vs_numpy import ROWS  # noqa: E402

# Not compiled here, by design: printing and asserting have no result to compare
# (tests/backends/test_compiled_effects.py checks what print writes; tests/autograph/
# test_errors.py what a failing assert raises, compiled and on the interpreter).
SKIP = {"ember.print": "no result; see test_compiled_effects.py",
        "ember.assert": "no result; see tests/autograph/test_errors.py"}
NAMES = sorted(n for n in ROWS if n not in SKIP)


# Operands whose shape the op's definition requires to be static (kept static in the
# dynamic variant): conv2d's filter window, the random ops' 2-element seed, scatter indices.
STATIC_OPERANDS = {"ember.conv2d": {1}, "ember.random_uniform": {0},
                   "ember.random_normal": {0}}
STATIC_OPERANDS["ember.tensor_scatter"] = {1}  # the index depth (last dim of indices)
STATIC_OPERANDS["ember.depthwise_conv2d"] = {1}
# With `?` dims, which dims squeeze drops is only known at run time: the runtime interprets
# it (NotCompilable names the reason), as TensorFlow needs known dims to squeeze.
DYNAMIC_NOT_COMPILABLE = {"ember.squeeze": "rank of its result .* depends on run-time values"}


def _type(a: np.ndarray, dynamic: bool) -> TensorType:
    shape = tuple(None for _ in a.shape) if dynamic else a.shape
    return TensorType(dtypes.as_dtype(a.dtype), shape)


def _module(name: str, arrays: list, attrs: dict, dynamic: bool) -> tuple[str, list]:
    """The module text of `@f` running op `name`, and the arrays `@f` takes."""
    spec = REGISTRY[name]
    as_args = not spec.uses_values
    args = arrays if as_args else []
    static = STATIC_OPERANDS.get(name, set())
    with default_context(), ir.Location.unknown():
        module = ir.Module.create()

        def body(*values):
            if not as_args:
                with ir.InsertionPoint.current:
                    values = [emit(creation.ConstantOp, (), {"value": a}) for a in arrays]
            return emit(spec, list(values), attrs)
        build_function(module, "f", [_type(a, dynamic and i not in static)
                                     for i, a in enumerate(args)], body)
        return str(module), args


def _reference(name: str, arrays: list, attrs: dict) -> list[np.ndarray]:
    out = execute(REGISTRY[name], [Tensor(np.asarray(a)) for a in arrays], attrs)
    return [t.numpy() for t in (out if isinstance(out, tuple) else (out,))]


def _check(name: str, arrays: list, attrs: dict, dynamic: bool) -> None:
    text, args = _module(name, arrays, attrs, dynamic)
    exe = compile_function(text, "f", [_type(a, False) for a in args])
    got = exe([np.asarray(a, order="C") for a in args])
    want = _reference(name, arrays, attrs)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape, (name, g.dtype, g.shape, w.dtype,
                                                            w.shape)
        if w.dtype.kind in "fV":  # float, and the ml_dtypes half floats
            np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64),
                                       rtol=2e-6, atol=1e-6, equal_nan=True, err_msg=name)
        elif w.dtype.kind == "c":  # complex: sums (DFTs) in another order than numpy's
            tol = 1e-12 if w.dtype == np.complex128 else 2e-6
            np.testing.assert_allclose(g, w, rtol=tol, atol=tol, equal_nan=True, err_msg=name)
        else:
            np.testing.assert_array_equal(g, w, err_msg=name)


def _row(name: str):
    operands, attrs, _ = ROWS[name]
    return [np.asarray(a) for a in operands], attrs


@pytest.mark.parametrize("name", NAMES)
def test_static_op_compiled_matches_reference(name):
    _check(name, *_row(name), dynamic=False)


@pytest.mark.parametrize("name", NAMES)
def test_dynamic_op_compiled_matches_reference(name):
    if name in DYNAMIC_NOT_COMPILABLE:
        with pytest.raises(NotCompilable, match=DYNAMIC_NOT_COMPILABLE[name]):
            _check(name, *_row(name), dynamic=True)
        return
    _check(name, *_row(name), dynamic=True)


ELEMENTWISE = [n for n in NAMES if REGISTRY[n].has(Trait.ELEMENTWISE)]


@pytest.mark.parametrize("name", ELEMENTWISE)
def test_elementwise_op_on_empty_tensors(name):
    arrays, attrs = _row(name)
    big = max(arrays, key=lambda a: a.ndim)
    axis = next(i for i, d in enumerate(big.shape) if d > 1)  # not a broadcast dim
    lead = big.ndim - axis
    emptied = [np.take(a, [], axis=a.ndim - lead) if a.ndim >= lead and
               a.shape[a.ndim - lead] == big.shape[axis] else a for a in arrays]
    assert big.ndim and any(a.size == 0 for a in emptied), name
    _check(name, emptied, attrs, dynamic=False)


def test_the_table_covers_the_ops_and_compiles_them():
    assert len(NAMES) + len(SKIP) == len(ROWS) and len(ELEMENTWISE) >= 40
    with pytest.raises(NotCompilable, match="string"):  # host-only, named
        text, args = _module("ember.add", [np.array([b"a"], object)] * 2, {}, False)
        compile_function(text, "f", [_type(a, False) for a in args])
