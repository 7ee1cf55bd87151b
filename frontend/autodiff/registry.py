"""Gradient rules: `@vjp(Spec)` registers the vector-Jacobian product of an op spec.

A rule is written in em ops, so the same rule runs eagerly (on the recorded values) and
while tracing (emitting the backward ops into the function being traced). It is called as

    rule(ct, *operands, out=results, **attrs) -> one cotangent per operand (None: none)

where `ct` is the cotangent of the op's result (a tuple, with None for results that get
none, when the op has several), `operands` the op's inputs, `out` its result(s) and `attrs`
its normalised attributes. Ops that have no gradient are declared with
`non_differentiable(Spec, reason)`; `tests/autodiff/test_rule_coverage.py` fails for an op
that is neither.
"""

from __future__ import annotations

from typing import Callable

from ember.dialects.ember.errors import EmberError

_RULES: dict[type, Callable] = {}
_NON_DIFFERENTIABLE: dict[type, str] = {}


class NoGradientError(EmberError, LookupError):
    """A gradient was asked through an op that has no gradient rule."""


def vjp(*specs: type):
    """Decorator: registers the function as the gradient rule of each spec in `specs`."""
    def register(rule: Callable) -> Callable:
        for spec in specs:
            if spec in _RULES or spec in _NON_DIFFERENTIABLE:
                raise ValueError(f"{spec.name} already has a gradient rule")
            _RULES[spec] = rule
        return rule
    return register


def non_differentiable(reason: str, *specs: type) -> None:
    """Declares that `specs` pass no gradient (their results are constant to the tape)."""
    for spec in specs:
        if spec in _RULES or spec in _NON_DIFFERENTIABLE:
            raise ValueError(f"{spec.name} already has a gradient rule")
        _NON_DIFFERENTIABLE[spec] = reason


_loaded = False


def _load_rules() -> None:
    """Imports the rules_*.py modules (they register their rules) when a tape first asks: a
    program that takes no gradient never loads them."""
    global _loaded
    if not _loaded:
        import importlib
        for group in ("elementwise", "structure", "complex", "math", "nn", "scatter", "state"):
            importlib.import_module(f"ember.frontend.autodiff.rules_{group}")
        _loaded = True


def rule_for(spec: type) -> Callable | None:
    _loaded or _load_rules()
    return _RULES.get(spec)


def is_non_differentiable(spec: type) -> bool:
    _loaded or _load_rules()
    return spec in _NON_DIFFERENTIABLE


def coverage() -> tuple[dict, dict]:
    """(rules, non-differentiable reasons), each keyed by spec, for the coverage test."""
    _load_rules()
    return dict(_RULES), dict(_NON_DIFFERENTIABLE)


def missing_rule_error(spec: type) -> NoGradientError:
    return NoGradientError(f"no gradient is defined for {spec.name}: the gradient asked for flows "
                        f"through it. Wrap the input in em.stop_gradient if none should flow, "
                        f"or give the computation a gradient with @em.custom_gradient")
