"""TensorFlow's auto-packing: a (nested) list or tuple that holds tensors converts to one
tensor by stacking, level by level (`em.convert_to_tensor([x[0], i + 1])`, `em.gather(x,
[i, 0])`, `em.concat([x, [t]], 0)`). The other elements convert to the dtype of the first
tensor found, as TensorFlow's `_autopacking_conversion_function` does. Stacking keeps the
elements' gradients and works on symbolic tensors, so eager and compiled code agree.
"""

from __future__ import annotations


_PLAIN = frozenset({float, int, bool, str, bytes, complex})


def first_tensor(value):
    """The first tensor (or variable) in the nested lists and tuples `value`, in order, or
    None. A list of plain numbers is checked at C speed (a big nested list of floats
    converts about as fast as before); only one holding something else is searched in
    order."""
    if type(value) is not list and type(value) is not tuple:
        return None
    from ember.frontend.tensor import Tensor
    stack, other = [value], False
    while stack and not other:
        items = stack.pop()
        if _PLAIN.issuperset(map(type, items)):  # (at C speed: numbers only)
            continue
        for item in items:
            kind = type(item)
            if kind in _PLAIN:
                continue
            if kind is list or kind is tuple:
                stack.append(item)
            else:
                other = True
                break
    return _in_order(value, Tensor) if other else None


def _in_order(value, tensor_type):
    """The first tensor or variable of `value`, depth first, or None."""
    for item in value:
        if type(item) is list or type(item) is tuple:
            found = _in_order(item, tensor_type)
            if found is not None:
                return found
        elif isinstance(item, tensor_type) or hasattr(item, "_as_tensor"):
            return item
    return None


def pack(value, first, dtype):
    """`value` stacked into one tensor of the dtype of its first tensor `first` (`dtype`,
    if given, must be that dtype)."""
    from ember.frontend.ops import stack
    from ember.frontend.tensor import convert_to_tensor
    dtype = dtype or convert_to_tensor(first).dtype

    def build(item):
        if type(item) is list or type(item) is tuple:
            if not item:
                raise ValueError(f"cannot pack {value!r} into a tensor: it holds an empty "
                                 "list beside tensors (every level must be rectangular)")
            return stack([build(e) for e in item])
        return convert_to_tensor(item, dtype=dtype)
    return build(value)
