"""IR plumbing: dense elements <-> numpy, attribute conversion, emit/build_function, verifier."""

import ml_dtypes
import numpy as np
import pytest
from mlir import ir

import ember as em
from ember.dialects.ember import (OpAttributeError, OpShapeError, OpTypeError, creation,
                                  dtypes, elementwise, elements, reduction, state, verifier)
from ember.dialects.ember.builder import build_function, emit, emit_typed
from ember.dialects.ember.types import ResourceType, TensorType, parse_type

ELEMENT_CASES = [
    ("f32", np.array([[1.5, -2.0], [np.inf, np.nan]], np.float32), dtypes.float32),
    ("f64", np.array([0.1, -0.0]), dtypes.float64),
    ("f16", np.array([1, 2, 65504], np.float16), dtypes.float16),
    ("bf16", np.array([1.5, -3.0, 1e30], ml_dtypes.bfloat16), dtypes.bfloat16),
    ("bf16-large-hex", np.arange(300).astype(ml_dtypes.bfloat16), dtypes.bfloat16),
    ("i1", np.array([True, False, True]), dtypes.bool_),
    ("i8", np.array([-128, 127], np.int8), dtypes.int8),
    ("ui8", np.array([0, 255], np.uint8), dtypes.uint8),
    ("i64", np.array([-(2**62), 2**62]), dtypes.int64),
    ("scalar", np.array(3, np.int32), dtypes.int32),
    ("empty", np.zeros((0, 3), np.float32), dtypes.float32),
    ("string", np.array(["a", 'q"uote', "back\\slash", "tab\tnew\nline", "ünï"], object),
     dtypes.string),
    ("string-2d", np.array([["x", "y"], ["", "z"]], object), dtypes.string),
]


@pytest.mark.parametrize("label,value,dtype", ELEMENT_CASES, ids=[c[0] for c in ELEMENT_CASES])
def test_dense_elements_round_trip_through_text(label, value, dtype, context):
    ttype = TensorType(dtype, value.shape)
    attr = elements.from_numpy(value, ttype)
    reparsed = ir.Attribute.parse(str(attr))
    back = elements.to_numpy(reparsed, ttype)
    assert back.dtype == dtype.np_dtype and back.shape == value.shape
    if dtype.is_string:  # strings come back as UTF-8 bytes, as TensorFlow's
        assert back.tolist() == [v.encode() for v in value.reshape(-1)] or \
            back.reshape(-1).tolist() == [v.encode() for v in value.reshape(-1)]
    else:
        np.testing.assert_array_equal(back.astype(np.float64), value.astype(np.float64))


def test_splat_attribute_expands_to_full_shape(context):
    attr = ir.Attribute.parse("dense<1.5> : tensor<2x3xbf16>")
    out = elements.to_numpy(attr, TensorType(dtypes.bfloat16, (2, 3)))
    assert out.shape == (2, 3) and float(out[1, 2]) == 1.5


@pytest.mark.parametrize("text", ["tensor<2x?xf32>", "tensor<*xi8>", "tensor<f64>",
                                  "tensor<3x!ember.string>", "!ember.resource<tensor<2xf32>>",
                                  "tensor<0x4xui8>", "tensor<?x2xcomplex<f32>>",
                                  "tensor<complex<f64>>"])
def test_types_print_as_they_parse(text):
    assert str(parse_type(text)) == text


@pytest.mark.parametrize("text", ["i32", "tensor<2xcomplex<f16>>", "tensor<2xi7>",
                                  "tensor<axf32>", "memref<2xf32>"])
def test_non_ember_types_are_rejected(text):
    with pytest.raises(TypeError):
        parse_type(text)


def test_emit_builds_verified_function(context):
    module = ir.Module.create()

    def body(x, r):
        old = emit(state.ReadVariableOp, [r])
        y = emit(elementwise.AddOp, [x, old])
        emit(state.AssignVariableOp, [r, y])
        emit(state.PrintOp, [y], {"format": "y = {}"})
        return emit(reduction.ReduceSumOp, [y], {"axes": [0], "keepdims": True})

    f32x4 = TensorType(em.float32, (4,))
    build_function(module, "step", [f32x4, ResourceType(f32x4)], body)
    verifier.check(module)
    text = str(module)
    assert "-> tensor<1xf32>" in text
    assert '"ember.print"' in text and 'format = "y = {}"' in text


def test_emit_infers_static_shape_from_constant_operands(context):
    module = ir.Module.create()

    def body():
        dims = emit(creation.ConstantOp, attrs={"value": np.array([2, 3], np.int64)})
        value = emit(creation.ConstantOp, attrs={"value": np.float32(0)})
        return emit(creation.FillOp, [dims, value])

    build_function(module, "zeros", [], body)
    assert "-> tensor<2x3xf32>" in str(module)


@pytest.mark.parametrize("spec,operands,attrs,error,match", [
    (elementwise.AddOp, ["f32x4", "f32x3"], {}, OpShapeError, "not broadcast-compatible"),
    (elementwise.AddOp, ["f32x4", "i32x4"], {}, OpTypeError, "different element types"),
    (elementwise.ExpOp, ["i32x4"], {}, OpTypeError, "floating-point"),
    (reduction.ReduceSumOp, ["f32x4"], {"axes": [1]}, OpAttributeError, "out of range"),
    (reduction.ReduceSumOp, ["f32x4"], {"axes": [0], "keep": True}, OpAttributeError,
     "has no attribute 'keep'"),
    (reduction.ReduceSumOp, ["f32x4"], {}, OpAttributeError, "requires attribute 'axes'"),
    (reduction.ReduceSumOp, ["f32x4"], {"axes": 0}, OpAttributeError, "expects an `array"),
    (elementwise.AddOp, ["f32x4"], {}, OpTypeError, "expects 2 operands"),
    (state.ReadVariableOp, ["f32x4"], {}, OpTypeError, "must be a variable resource"),
    (elementwise.AddOp, ["f32x4", 3.0], {}, OpTypeError, "must be an MLIR value"),
])
def test_emit_rejects_bad_input_before_calling_mlir(spec, operands, attrs, error, match,
                                                     context):
    types = {"f32x4": TensorType(em.float32, (4,)), "f32x3": TensorType(em.float32, (3,)),
             "i32x4": TensorType(em.int32, (4,))}
    module = ir.Module.create()
    names = [o for o in operands if isinstance(o, str)]

    def body(*args):
        values = iter(args)
        real = [next(values) if isinstance(o, str) else o for o in operands]
        with pytest.raises(error, match=match):
            emit(spec, real, attrs)
        # the tracer's way in, which remembers inferred types: never an error
        typed = [types[o] if isinstance(o, str) else None for o in operands]
        for _ in range(2):
            with pytest.raises(error, match=match):
                emit_typed(spec, real, attrs, operand_types=typed)

    build_function(module, "f", [types[n] for n in names], body)


def test_emit_typed_builds_what_emit_builds(context):
    f32x4, f32x1 = TensorType(em.float32, (4,)), TensorType(em.float32, (1,))

    def build(make):
        module = ir.Module.create()
        build_function(module, "f", [f32x4, f32x1], make)
        return str(module)

    def by_emit(x, y):
        return emit(elementwise.TanhOp, [emit(elementwise.AddOp, [x, y])])

    def by_emit_typed(x, y):
        for _ in range(3):  # the second and third time from what the first one inferred
            (z,), (zt,) = emit_typed(elementwise.AddOp, [x, y], operand_types=[f32x4, f32x1])
            (w,), (wt,) = emit_typed(elementwise.TanhOp, [z], operand_types=[zt])
            assert zt == wt == f32x4
        return w

    assert build(by_emit_typed).count('"ember.tanh"') == 3
    assert build(by_emit).split("ember.tanh")[0] in build(by_emit_typed)


def test_verifier_reports_location_and_mlir_style_message(context):
    module = ir.Module.parse(
        "func.func @f(%a: tensor<4xf32>) {\n"
        '  %0 = "ember.reduce_sum"(%a) {axes = array<i64: 0>, keepdims = false}'
        " : (tensor<4xf32>) -> tensor<4xf32>\n"
        "  return\n}\n")
    found = verifier.verify(module)
    assert len(found) == 1
    d = found[0]
    assert (d.line, d.col) == (2, 8)
    assert d.message == ("'ember.reduce_sum' op result #0 has type tensor<4xf32> but the "
                         "operands give tensor<f32>")


def test_verifier_accepts_results_that_refine_dynamic_dims(context):
    module = ir.Module.parse(
        "func.func @f(%a: tensor<?xf32>) {\n"
        '  %0 = "ember.exp"(%a) : (tensor<?xf32>) -> tensor<4xf32>\n'
        "  return\n}\n")
    assert verifier.verify(module) == []


def test_verifier_allows_dialect_prefixed_discardable_attributes(context):
    module = ir.Module.parse(
        "func.func @f(%a: tensor<2xf32>) {\n"
        '  %0 = "ember.exp"(%a) {ember.note = "hi"} : (tensor<2xf32>) -> tensor<2xf32>\n'
        "  return\n}\n")
    assert verifier.verify(module) == []
