"""AutoGraph: Python `if`/`while`/`for`, `break`/`continue`/`return`, `and`/`or`/`not` and
`assert` on tensors, staged as `scf` control flow (the tf.function guide's AutoGraph).

`em.function` converts the function it traces (`autograph=False` turns it off), and the
user's functions it calls, by rewriting their source (conversion.py, the converters in
converters/ and what their output calls in operators.py and loops.py). On Python values
and eager tensors converted code does what Python does.

    em.autograph.to_code(f)        the converted source of f
    em.autograph.experimental.set_loop_options(shape_invariants=[(x, em.TensorShape([None]))])
"""

from __future__ import annotations

import types

from ember.frontend.autograph.conversion import (AutoGraphWarning, convert, do_not_convert,
                                                 to_code)


def set_loop_options(shape_invariants=None, maximum_iterations=None):
    """Options of the staged loop whose body this call begins (tf.autograph's): each
    `(variable, em.TensorShape)` in `shape_invariants` lets that loop variable's shape vary
    as the shape allows; `maximum_iterations` stops the loop after that many iterations.
    The converter moves the call in front of the loop; run as written (unconverted, or
    in eager code) it does nothing."""
    del shape_invariants, maximum_iterations


experimental = types.SimpleNamespace(set_loop_options=set_loop_options,
                                     do_not_convert=do_not_convert)

__all__ = ["AutoGraphWarning", "convert", "do_not_convert", "experimental", "to_code"]
