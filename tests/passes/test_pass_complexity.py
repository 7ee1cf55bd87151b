"""The optimisation pipeline's work is linear in the op count at any nesting depth.

Tests never assert timings, so these count the op visits of every walk (`iter_ops` and
`find_op`, which the passes and the verifier use) while a function of nested `em.cond`s or nested
`em.while_loop`s is optimised, and check the visits per op stay flat as the depth grows.
(Purity of a region op used to be re-derived at every level: 16 nested conds took 8.6 s.)
"""

from mlir import ir

import ember as em
from ember.dialects.ember import verifier
from ember.dialects.ember.irdl import default_context


def _nested_conds(x, depth):
    if depth == 0:
        return x * 2.0 + 1.0
    return em.cond(x[0] > float(depth), lambda: _nested_conds(x + 1.0, depth - 1),
                   lambda: x * 3.0)


def _nested_loops(x, depth):
    if depth == 0:
        return x * 2.0 + 1.0

    def body(i, acc):
        return i + 1, _nested_loops(acc, depth - 1) + em.exp(x)
    return em.while_loop(lambda i, acc: i < 2, body, (em.constant(0), x))[1]


def _visits_per_op(monkeypatch, nest, depth: int) -> float:
    """Op visits of the walks made while tracing and optimising `nest(x, depth)`, per op."""
    visits = [0]
    walk = verifier._walk

    def counted(op, visit):
        def counting(o):
            visits[0] += 1
            return visit(o)
        walk(op, counting)

    with monkeypatch.context() as patch:
        patch.setattr(verifier, "_walk", counted)
        function = em.function(lambda x: nest(x, depth))
        concrete = function.get_concrete_function(em.TensorSpec([4], em.float32))
        concrete.mlir("optimized")
    with default_context():
        traced = ir.Module.parse(concrete.mlir("traced"))
        ops = len(verifier.iter_ops(traced.operation))
    return visits[0] / ops


def test_nested_conds_optimise_in_linear_work(monkeypatch):
    shallow = _visits_per_op(monkeypatch, _nested_conds, 4)
    for depth in (8, 16, 24):  # exponential before: stop at the first depth that shows it
        assert _visits_per_op(monkeypatch, _nested_conds, depth) <= 1.25 * shallow, depth


def test_nested_loops_optimise_in_linear_work(monkeypatch):
    shallow = _visits_per_op(monkeypatch, _nested_loops, 4)
    for depth in (8, 16):
        assert _visits_per_op(monkeypatch, _nested_loops, depth) <= 1.25 * shallow, depth
