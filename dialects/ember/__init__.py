"""The `ember` MLIR dialect: op specs (one class per op), types, IRDL and verification.

Importing this package registers every op spec in `REGISTRY` (name -> spec class). The
modules are imported explicitly, in a fixed order, so registration never depends on what
else the user imported.
"""

from ember.dialects.ember import (creation, elementwise, indexing, nn, philox,  # noqa: F401
                                  reduction, scan, scatter, sorting, state, structure)
from ember.dialects.ember import complex, signal  # noqa: F401,A004 - complex dtypes (issue 13)
from ember.dialects.ember.base import (REGISTRY, Attr, InvalidArgumentError, Op,
                                       OpAttributeError, OpError, OpShapeError, OpTypeError,
                                       Trait)
from ember.dialects.ember.types import ResourceType, TensorType, parse_type

__all__ = ["REGISTRY", "Attr", "InvalidArgumentError", "Op", "OpAttributeError", "OpError", "OpShapeError",
           "OpTypeError", "ResourceType", "TensorType", "Trait", "parse_type", "ops_by_family"]


def ops_by_family() -> dict[str, list[type[Op]]]:
    """The registered op specs grouped by family, each list sorted by name."""
    out: dict[str, list[type[Op]]] = {}
    for spec in sorted(REGISTRY.values(), key=lambda s: s.name):
        out.setdefault(spec.family, []).append(spec)
    return out
