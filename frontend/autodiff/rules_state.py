"""Ops that pass no gradient by nature: the state ops (state.py) and the Philox random ops
(philox.py)."""

from __future__ import annotations

from ember.dialects.ember import philox as P
from ember.dialects.ember import state as St
from ember.frontend.autodiff.registry import non_differentiable

non_differentiable("a Variable read: the tape records it as the Variable's value "
                   "(Variable.read_value), not as an op on the resource", St.ReadVariableOp)
non_differentiable("it has no result: the new value reaches later reads through the "
                   "Variable, which the tape watches itself (as TensorFlow's assign ops)",
                   St.AssignVariableOp, St.AssignAddVariableOp, St.AssignSubVariableOp)
non_differentiable("it has no result (a side effect: printing or checking)",
                   St.PrintOp, St.AssertOp)
non_differentiable("random numbers: the result does not depend on the input values "
                   "(a counter-based generator's state and a shape)",
                   P.PhiloxRandomOp, P.PhiloxUniformIntOp)
