"""A short tour of Ember's foundation: eager tensors, the ember dialect, ember-opt.

Run with `make demo`. Each step prints what it does, so the output reads as a walkthrough.
"""

import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
from mlir import ir

import ember as em
from ember.dialects.ember import REGISTRY, ops_by_family, verifier
from ember.dialects.ember import creation, elementwise, reduction, structure
from ember.dialects.ember.builder import build_function, emit
from ember.dialects.ember.irdl import make_context
from ember.dialects.ember.types import TensorType


def step(title: str) -> None:
    print(f"\n== {title} " + "=" * max(0, 70 - len(title)))


def eager_tensors() -> None:
    step("1. Eager tensors run each op's numpy reference kernel")
    x = em.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    print(">>> x = em.constant([[1., 2., 3.], [4., 5., 6.]])")
    print(">>> em.reduce_sum(x * 2 + 1, axis=1)")
    print(repr(em.reduce_sum(x * 2 + 1, axis=1)))
    print(">>> x[:, ::2] @ em.ones([2, 1])")
    print(repr(x[:, ::2] @ em.ones([2, 1])))
    print(">>> em.constant([7, -7]) // -2   # floor division, as Python and TensorFlow")
    print(repr(em.constant([7, -7]) // -2))
    print(">>> em.constant([1, 2]) + 1.5")
    try:
        em.constant([1, 2]) + 1.5
    except TypeError as e:
        print(f"TypeError: {e}")


def registry_summary() -> None:
    step(f"2. The op registry: {len(REGISTRY)} ops, each defined once")
    for family, specs in ops_by_family().items():
        names = ", ".join(s.name.split(".", 1)[1] for s in specs)
        print(f"  {family:<11} {names}")
    print("\nFrom ember.add's spec (docstring, traits, inference):")
    spec = REGISTRY["ember.add"]
    print(f"  summary: {spec.summary()}")
    print(f"  example: {spec.example()}")
    print(f"  traits:  {sorted(t.value for t in spec.traits)}")


def build_module() -> ir.Module:
    step("3. Build an ember module with the Python API (emit + build_function)")
    f32 = em.float32

    def body(x, w, b):
        h = emit(structure.MatmulOp, [x, w])
        h = emit(elementwise.AddOp, [h, b])
        h = emit(elementwise.ReluOp, [h])
        two = emit(creation.ConstantOp, attrs={"value": np.float32(2.0)})
        h = emit(elementwise.MulOp, [h, two])
        return emit(reduction.ReduceMeanOp, [h], {"axes": [1], "keepdims": False})

    module = ir.Module.create()
    build_function(module, "dense_relu_mean",
                   [TensorType(f32, (None, 4)), TensorType(f32, (4, 8)), TensorType(f32, (8,))],
                   body)
    print(module)
    verifier.check(module)
    print("verified: MLIR's IRDL checks + the op specs' type inference agree")
    return module


def verifier_errors() -> None:
    step("4. The verifier explains bad IR in MLIR style")
    bad = ('func.func @bad(%a: tensor<4xf32>, %b: tensor<3xf32>) {\n'
           '  %0 = "ember.add"(%a, %b) : (tensor<4xf32>, tensor<3xf32>) -> tensor<4xf32>\n'
           '  return\n}')
    print(bad)
    try:
        verifier.check(ir.Module.parse(bad))
    except verifier.VerificationError as e:
        for d in e.diagnostics:
            print(d.format("bad.mlir"))


def run_ember_opt(module: ir.Module) -> None:
    step("5. ember-opt: parse, verify, run a pipeline, print")
    tool = shutil.which("ember-opt") or os.path.join(os.path.dirname(sys.executable),
                                                     "ember-opt")
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "dense.mlir")
        with open(path, "w") as f:
            f.write(str(module))
        cmd = [tool, path, "-p", "builtin.module(canonicalize,cse)"]
        print("$ ember-opt dense.mlir -p 'builtin.module(canonicalize,cse)'")
        done = subprocess.run(cmd, capture_output=True, text=True, check=False)
        print(done.stdout.strip() or done.stderr.strip())
        if done.returncode:
            raise SystemExit(f"ember-opt failed with exit code {done.returncode}")


def traced_function() -> None:
    step("6. em.function: trace once per signature, optimise, compile, run")

    @em.function
    def layer(x, w, scale):
        print(f"  (tracing layer for x of shape {x.shape})")
        h = em.relu(em.matmul(x, w)) * scale
        unused = em.exp(h)  # dead code: ember-dce removes it
        return h + 0  # x + 0 -> x for integers; kept for floats (-0.0 + 0 is +0.0)

    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((4, 3)).astype(np.float32), np.eye(3, dtype=np.float32)
    out = layer(x, w, 2.0)
    layer(x[:2], w, 2.0)
    layer(x, w, 2.0)
    print(f"  result[0] = {out.numpy()[0]}")
    concrete = layer.get_concrete_function(x, w, 2.0)
    print("\n  traced IR:")
    print("    " + concrete.mlir("traced").replace("\n", "\n    "))
    print("  after ember-optimize:")
    print("    " + concrete.mlir("optimized").replace("\n", "\n    "))
    print(f"  pass statistics: {em.passes.stats(concrete)}")
    print(f"  compiled for input shapes: {concrete._executor.compiled_shapes}")
    print("  " + layer.explain_retrace().replace("\n", "\n  "))


def main() -> None:
    eager_tensors()
    registry_summary()
    context = make_context()
    with context, ir.Location.unknown():
        module = build_module()
        verifier_errors()
        run_ember_opt(module)
    traced_function()
    print(f"\nTour complete: 6 steps, {len(REGISTRY)} ops, 1 module built, verified and "
          "optimised, 1 function traced twice and compiled.")


if __name__ == "__main__":
    main()
