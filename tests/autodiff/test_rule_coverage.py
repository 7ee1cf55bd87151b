"""Every op spec has a gradient rule or is declared non-differentiable with a reason."""

import pytest

import ember  # noqa: F401 (registers every spec and every rule)
from ember.dialects.ember.base import REGISTRY
from ember.frontend.autodiff import registry


def test_every_op_has_a_rule_or_a_reason():
    rules, reasons = registry.coverage()
    missing = sorted(s.name for s in REGISTRY.values() if s not in rules and s not in reasons)
    assert not missing, (f"ops with neither a gradient rule (@vjp) nor a "
                         f"non_differentiable(reason, ...) declaration: {missing}")


def test_reasons_are_given_and_rules_are_for_registered_ops():
    rules, reasons = registry.coverage()
    registered = set(REGISTRY.values())
    for spec, reason in reasons.items():
        assert isinstance(reason, str) and len(reason) > 10, spec.name
    assert not set(rules) & set(reasons)
    assert set(rules) | set(reasons) <= registered


def test_a_rule_cannot_be_registered_twice():
    spec = next(iter(registry.coverage()[0]))
    with pytest.raises(ValueError, match="already has a gradient rule"):
        registry.vjp(spec)(lambda ct, *a, **k: None)
    with pytest.raises(ValueError, match="already has a gradient rule"):
        registry.non_differentiable("a reason long enough", spec)
