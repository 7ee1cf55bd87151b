"""Automatic differentiation: `em.GradientTape` and the gradient rules of every op.

recording.py: which tapes record (per thread and trace); tape.py: the tape and backprop;
registry.py: `@vjp` rules; rules_*.py: the rules, one module per group of op specs
(elementwise, structure, math: digamma/reduce_prod/scans, nn: conv/pool, scatter: scatter/
sort, complex: complex parts/FFT, state: the state and random ops, which have none), which
the registry imports when a tape first asks for a rule;
regions.py: a branch or loop body as one recorded operation, and the Variable values its
gradient's replay reads; control.py: em.cond's gradient and the replay (`gradient_of`);
loops.py and stacks.py: scf.while's gradient and the per-iteration stacks it keeps;
custom.py: stop_gradient, custom_gradient, recompute_grad; jacobians.py.
"""

from ember.frontend.autodiff.custom import custom_gradient, recompute_grad, stop_gradient
from ember.frontend.autodiff.tape import GradientTape, UnconnectedGradients

__all__ = ["GradientTape", "UnconnectedGradients", "custom_gradient", "recompute_grad",
           "stop_gradient"]
