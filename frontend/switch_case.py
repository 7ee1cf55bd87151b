"""N-way conditionals built on `em.cond`: `em.switch_case` (tf.switch_case) runs the branch
an integer index picks, `em.case` (tf.case) the first whose predicate is true.

Eagerly, and in a trace whose index or predicates are known values, the chosen Python
function is simply called. With a symbolic index or predicate they become a chain of
`scf.if`s, as TensorFlow's `tf.case` is a chain of `tf.cond`s: `switch_case` tests
`index == 0`, `index == 1`, ... after moving an out-of-range index to the last branch (the
default), and `case` tests the predicates in order. Upstream's `scf.index_switch` would be
one op for `switch_case`; the chain reuses em.cond's branch merging (the most specific
common shape of the branches' results), its gradients and its lowering.

TensorFlow's checks are kept, with errors that say what to pass instead: the index is an
integer tensor, each predicate a bool tensor (Python values are refused, as TensorFlow 2
refuses them), branch keys are 0..n-1. `em.case` without a default runs its last pair's
function when no earlier predicate holds and raises an `InvalidArgumentError` (at once
eagerly, when the code runs if compiled) if that pair's predicate is false too;
`exclusive=True` raises one when more than one predicate is true.
"""

from __future__ import annotations

import collections
from typing import Callable

from ember.dialects.ember import dtypes
from ember.frontend import ops
from ember.frontend.control_flow import tensor_outputs, trace_cond
from ember.frontend.effects import assert_true
from ember.frontend.tensor import convert_to_tensor
from ember.frontend.tensor_like import is_tensor
from ember.frontend.tracing import SymbolicTensor, current_graph


def switch_case(branch_index, branch_fns, default=None, name="switch_case"):
    """Runs `branch_fns[branch_index]()` (tf.switch_case); traced as a chain of `scf.if`.

    Args:
      branch_index: a scalar integer tensor. An index outside [0, len(branch_fns)) runs
        `default`, or the last branch when there is no default, as in TensorFlow.
      branch_fns: a list or tuple of callables taking no arguments, a list of
        `(int, callable)` pairs or a dict `{int: callable}`; the keys must be 0..n-1.
      default: a callable for an out-of-range index (optional).
      name: ignored (TensorFlow's op name).

    Returns:
      What the chosen branch returns. Traced, every branch must return the same
      structure and dtypes (shapes may differ: the result has their common shape), and
      the Python numbers and numpy values branches return become tensors, as em.cond's.

    Raises:
      TypeError: `branch_index` is not an integer tensor, or a branch is not callable.
      ValueError: `branch_fns` is empty or its keys are not 0..n-1.

    Example:
      >>> import ember as em
      >>> branches = [lambda: em.constant(17), lambda: em.constant(31)]
      >>> em.switch_case(em.constant(1), branches, default=lambda: em.constant(-1))
      <ember.Tensor: shape=(), dtype=int32, numpy=31>
      >>> em.switch_case(em.constant(7), branches, default=lambda: em.constant(-1))
      <ember.Tensor: shape=(), dtype=int32, numpy=-1>
    """
    del name
    index = _branch_index(branch_index)
    fns = _indexed_branches(branch_fns, default)
    graph = current_graph()
    if graph is not None:
        fns = [_converted(fn) for fn in fns]
    if graph is None or not isinstance(index, SymbolicTensor):
        chosen = int(index)
        return fns[chosen if 0 <= chosen < len(fns) else -1]()
    labels = [f"branch {k}" for k in range(len(fns))]
    if default is not None:
        labels[-1] = "the default branch"
    last = convert_to_tensor(len(fns) - 1, dtype=index.dtype)
    index = ops.where(ops.logical_or(index < 0, index > last), last, index)

    def chain(k: int):
        if k == len(fns) - 1:
            return fns[k]()
        rest = labels[k + 1] if k + 2 == len(fns) else "the branches after it"
        return trace_cond(ops.equal(index, convert_to_tensor(k, dtype=index.dtype)), fns[k],
                          lambda: chain(k + 1), what="em.switch_case",
                          branches=(labels[k], rest))
    return chain(0)


def case(pred_fn_pairs, default=None, exclusive=False, strict=False, name="case"):
    """Runs the function of the first pair whose predicate is true, else `default` (tf.case);
    traced as a chain of `scf.if`.

    Args:
      pred_fn_pairs: a list or tuple of `(predicate, callable)` pairs: each predicate a
        scalar bool tensor, each callable taking no arguments. A dict is taken in its order,
        and only with `exclusive=True`, as TensorFlow 2 takes it.
      default: the callable to run when no predicate is true. Without one, the last pair's
        callable runs then, after checking its predicate is true: if none is, an
        `InvalidArgumentError` is raised (when the code runs, if it is compiled).
      exclusive: check that at most one predicate is true (an `InvalidArgumentError` if not).
      strict: return a one-element list or tuple as it is; otherwise (TensorFlow's default)
        a branch's `[x]` comes back as `x`.
      name: ignored (TensorFlow's op name).

    Returns:
      What the chosen callable returns (every branch must return the same structure and
      dtypes when traced).

    Raises:
      TypeError: a predicate is not a bool tensor or a function is not callable.
      ValueError: `pred_fn_pairs` is empty, or a dict with `exclusive=False`.

    Example:
      >>> import ember as em
      >>> x, y = em.constant(1), em.constant(2)
      >>> em.case([(x > y, lambda: em.constant(17)), (x < y, lambda: em.constant(23))],
      ...         default=lambda: em.constant(-1))
      <ember.Tensor: shape=(), dtype=int32, numpy=23>
    """
    del name
    preds, fns = _pred_fn_pairs(pred_fn_pairs, exclusive)
    if default is not None and not callable(default):
        raise TypeError(f"em.case: default must be a callable taking no arguments, got "
                        f"{default!r}")
    if exclusive:
        count = ops.reduce_sum(ops.cast(ops.stack(preds), dtypes.int32))
        assert_true(count <= 1, "em.case: more than one predicate is true with exclusive=True; "
                                "make the predicates exclusive, or pass exclusive=False to run "
                                "the first true one")
    labels = [f"the function of pred_fn_pairs[{k}]" for k in range(len(fns))]
    if default is None:  # TensorFlow's: the last pair is the default, if its predicate holds
        assert_true(ops.reduce_any(ops.stack(preds)),
                    f"em.case: none of the {len(preds)} predicates is true and there is no "
                    f"default; pass default= for that case")
        default, preds, fns = fns[-1], preds[:-1], fns[:-1]
        labels[-1] += " (the default)"
    else:
        labels.append("the default branch")
    graph = current_graph()
    if graph is not None:
        fns, default = [_converted(fn) for fn in fns], _converted(default)
    if not strict:
        fns, default = [_unpacked(fn) for fn in fns], _unpacked(default)

    def chain(k: int):
        if k == len(preds):
            return default()
        if graph is None or not isinstance(preds[k], SymbolicTensor):
            return fns[k]() if bool(preds[k]) else chain(k + 1)
        rest = labels[k + 1] if k + 1 == len(preds) else "the functions after it"
        return trace_cond(preds[k], fns[k], lambda: chain(k + 1), what="em.case",
                          branches=(labels[k], rest))
    return chain(0)


def _branch_index(value):
    """`switch_case`'s index as a scalar integer tensor, or a TypeError saying what to pass."""
    if not is_tensor(value):
        raise TypeError(f"em.switch_case: branch_index must be a scalar integer tensor, got "
                        f"{type(value).__name__} {value!r}; wrap it in em.constant (as "
                        f"tf.switch_case, it takes no Python or numpy values)")
    index = convert_to_tensor(value)
    if not index.dtype.is_integer:
        raise TypeError(f"em.switch_case: branch_index must be an integer tensor, got dtype "
                        f"{index.dtype.name}; cast it, e.g. em.cast(i, em.int32)")
    if index.shape.rank not in (0, None):
        raise ValueError(f"em.switch_case: branch_index must be a scalar, got shape "
                         f"{index.shape}")
    return index


def _indexed_branches(branch_fns, default) -> list[Callable]:
    """The branches of `switch_case` in key order, `default` last; TensorFlow's checks."""
    if branch_fns is None or isinstance(branch_fns, (list, tuple, dict)) and not branch_fns:
        raise ValueError("em.switch_case: branch_fns is empty; give at least one branch "
                         "function")
    if not isinstance(branch_fns, (list, tuple, dict)):
        raise TypeError(f"em.switch_case: branch_fns must be a list of callables, a list of "
                        f"(int, callable) pairs or a dict {{int: callable}}, got "
                        f"{type(branch_fns).__name__}")
    pairs = list(branch_fns.items()) if isinstance(branch_fns, dict) else list(branch_fns)
    for k, item in enumerate(pairs):
        if not callable(item) and not (isinstance(item, tuple) and len(item) == 2):
            raise TypeError(f"em.switch_case: branch_fns[{k}] is {item!r}, neither a callable "
                            f"taking no arguments nor an (int, callable) pair")
    if all(callable(fn) for fn in pairs):
        pairs = list(enumerate(pairs))
    elif any(callable(fn) for fn in pairs):
        raise TypeError("em.switch_case: branch_fns mixes callables and (int, callable) "
                        "pairs; give a list of callables, a list of pairs or a dict")
    for key, fn in pairs:
        if not isinstance(key, int) or isinstance(key, bool):
            raise TypeError(f"em.switch_case: branch key {key!r} must be a Python int")
        if not callable(fn):
            raise TypeError(f"em.switch_case: the branch for key {key} must be a callable "
                            f"taking no arguments, got {fn!r}")
    keys = sorted(key for key, _ in pairs)
    if keys != list(range(len(keys))):
        raise ValueError(f"em.switch_case: the branch keys must be 0 to {len(keys) - 1}, each "
                         f"once, got {{{', '.join(map(str, keys))}}}")
    fns = [fn for _, fn in sorted(pairs, key=lambda pair: pair[0])]
    if default is not None:
        if not callable(default):
            raise TypeError(f"em.switch_case: default must be a callable taking no "
                            f"arguments, got {default!r}")
        fns.append(default)
    return fns


def _pred_fn_pairs(pred_fn_pairs, exclusive: bool):
    """`case`'s predicates (scalar bool tensors) and functions; TensorFlow's checks."""
    if not isinstance(pred_fn_pairs, (list, tuple, dict)):
        raise TypeError(f"em.case: pred_fn_pairs must be a list of (predicate, callable) "
                        f"pairs, got {type(pred_fn_pairs).__name__}")
    if isinstance(pred_fn_pairs, dict) and not isinstance(pred_fn_pairs,
                                                          collections.OrderedDict):
        if not exclusive:
            raise ValueError("em.case: pred_fn_pairs is a dict, whose order does not say "
                             "which predicate is tested first (TensorFlow 2 refuses it too); "
                             "pass a list of (predicate, callable) pairs, or exclusive=True")
    pairs = list(pred_fn_pairs.items()) if isinstance(pred_fn_pairs, dict) else \
        list(pred_fn_pairs)
    if not pairs:
        raise ValueError("em.case: pred_fn_pairs is empty; give at least one (predicate, "
                         "callable) pair")
    preds, fns = [], []
    for k, pair in enumerate(pairs):
        if not isinstance(pair, tuple) or len(pair) != 2:
            raise TypeError(f"em.case: pred_fn_pairs[{k}] must be a (predicate, callable) "
                            f"tuple, got {pair!r}")
        pred, fn = pair
        preds.append(_predicate(pred, k))
        if not callable(fn):
            raise TypeError(f"em.case: the function of pred_fn_pairs[{k}] must be a callable "
                            f"taking no arguments, got {fn!r}")
        fns.append(fn)
    return preds, fns


def _predicate(value, k: int):
    where = f"em.case: the predicate of pred_fn_pairs[{k}]"
    if not is_tensor(value):
        raise TypeError(f"{where} must be a scalar bool tensor, got {type(value).__name__} "
                        f"{value!r}; compare tensors (e.g. `x > 0`), or use a Python `if` "
                        f"for a Python condition")
    pred = convert_to_tensor(value)
    if pred.dtype is not dtypes.bool_:
        raise TypeError(f"{where} must be a bool tensor, got dtype {pred.dtype.name}; "
                        f"compare it (e.g. `x > 0`)")
    if pred.shape.rank not in (0, None):
        raise ValueError(f"{where} must be a scalar, got shape {pred.shape}; reduce it "
                         f"(em.reduce_any, em.reduce_all)")
    return pred


def _converted(fn: Callable) -> Callable:
    """`fn` as AutoGraph converts it for tracing and with its outputs converted to tensors,
    as em.cond converts its branches (a branch chosen in Python while tracing too: it
    gives what tf.switch_case's Case op would)."""
    from ember.frontend.autograph.conversion import convert  # (it imports control_flow)
    return tensor_outputs(convert(fn))


def _unpacked(fn: Callable) -> Callable:
    """`fn` with a one-element list or tuple result replaced by its element (tf.case's
    non-strict mode)."""
    def unpacked():
        out = fn()
        return out[0] if isinstance(out, (list, tuple)) and len(out) == 1 else out
    return unpacked
