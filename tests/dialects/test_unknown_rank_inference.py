"""Every op's type inference on operands of unknown rank (`tensor<*x...>`), as TensorFlow's
shape functions: a result no less general than the static case gives, or an OpError that
names the op; never a TypeError/AttributeError/IndexError from inside the rule.

The operands and attributes are those of the eager-vs-numpy table, so every registered op
is audited; each non-empty subset of its operands is made unranked in turn.
"""

import itertools

import numpy as np
import pytest

from ember.dialects.ember import REGISTRY, OpError, dtypes, parse_type
from ember.dialects.ember.types import ResourceType, TensorType, types_compatible
from ember.frontend.tensor import Tensor
from test_eager_vs_numpy import ROWS, STATE_ROWS


def _static_case(name):
    """(spec, operand types, attrs, values) of the table row for `name`."""
    spec = REGISTRY[name]
    if name in STATE_ROWS:
        held = TensorType(dtypes.float32, (2,))
        arrays = [np.zeros(2, np.float32)] + [np.asarray(a) for a in STATE_ROWS[name][0]]
        types = [ResourceType(held)] + [TensorType(Tensor(a).dtype, a.shape)
                                        for a in arrays[1:]]
        return spec, types, {}, arrays
    operands, attrs, _ = ROWS[name]
    arrays = [np.asarray(a) for a in operands]
    types = [TensorType(Tensor(a).dtype, a.shape) for a in arrays]
    return spec, types, spec.normalize_attrs(attrs), arrays


def _unranked(t):
    if isinstance(t, ResourceType):
        return ResourceType(t.value.with_shape(None))
    return t.with_shape(None)


def _cases():
    for name in sorted(set(ROWS) | set(STATE_ROWS)):
        n = len(_static_case(name)[1])
        for mask in itertools.product((False, True), repeat=n):
            if any(mask):
                marks = "".join("*" if m else "r" for m in mask)
                yield pytest.param(name, mask, id=f"{name}-{marks}")


@pytest.mark.parametrize("name,mask", list(_cases()))
def test_inference_on_unranked_operands_is_general_or_an_op_error(name, mask):
    spec, types, attrs, arrays = _static_case(name)
    static = spec.infer_types(tuple(types), attrs, arrays if spec.uses_values else None)
    given = tuple(_unranked(t) if m else t for t, m in zip(types, mask))
    values = None
    if spec.uses_values:  # an unranked operand comes from a computation, not a constant
        values = tuple(None if m else a for a, m in zip(arrays, mask))
    try:
        inferred = spec.infer_types(given, attrs, values)
    except OpError as e:
        assert str(e).startswith(f"'{name}' op "), e
        return
    assert len(inferred) == len(static), (inferred, static)
    for want, got in zip(static, inferred):
        assert types_compatible(want, got), f"{got} is not as general as {want}"


@pytest.mark.parametrize("op,operands,attrs,result", [
    # the rank an attribute gives is kept, its dims are unknown
    ("ember.transpose", ["tensor<*xf32>"], {"perm": [2, 0, 1]}, "tensor<?x?x?xf32>"),
    ("ember.pad", ["tensor<*xi32>", "tensor<i32>"], {"paddings": [0, 1, 2, 3]},
     "tensor<?x?xi32>"),
    ("ember.conv2d", ["tensor<*xf32>", "tensor<3x3x2x5xf32>"], {}, "tensor<?x?x?x5xf32>"),
    # what only the rank decides stays unknown, as in TensorFlow
    ("ember.reduce_sum", ["tensor<*xf32>"], {"axes": [0]}, "tensor<*xf32>"),
    ("ember.squeeze", ["tensor<*xf32>"], {}, "tensor<*xf32>"),
    ("ember.expand_dims", ["tensor<*xf32>"], {"axis": -1}, "tensor<*xf32>"),
    ("ember.gather", ["tensor<*xf32>", "tensor<3xi32>"], {"axis": 1}, "tensor<*xf32>"),
    ("ember.one_hot", ["tensor<*xi32>", "tensor<f32>", "tensor<f32>"], {"depth": 4},
     "tensor<*xf32>"),
    ("ember.argmax", ["tensor<*xf32>"], {"axis": 0}, "tensor<*xi64>"),
    ("ember.shape", ["tensor<*xf32>"], {}, "tensor<?xi32>"),
    ("ember.add", ["tensor<*xf32>", "tensor<3xf32>"], {}, "tensor<*xf32>"),
])
def test_unranked_operand_gives_partially_known_result(op, operands, attrs, result):
    spec = REGISTRY[op]
    types = tuple(parse_type(t) for t in operands)
    inferred = spec.infer_types(types, spec.normalize_attrs(attrs))
    assert [str(t) for t in inferred] == [result]


def test_concat_of_unranked_says_how_to_give_a_rank():
    spec = REGISTRY["tensor.concat"]
    t = TensorType(dtypes.float32, None)
    with pytest.raises(OpError, match="must be ranked here: give it a known rank"):
        spec.infer_types((t, t), spec.normalize_attrs({"dim": 0}))
