"""`em.einsum` and `em.tensordot`: Einstein-summation contractions composed from
`ember.transpose`, `ember.reshape`, `ember.matmul` (batched) and `ember.reduce_sum`, as
TensorFlow's Python `einsum` builds them from BatchMatMul (upstream: `tf.einsum`,
`tf.tensordot`).

An equation is parsed once while tracing into per-operand label lists; `...` becomes
private labels, one per broadcast dim. Then:

1. repeated labels on one operand take its diagonal (multiply by an identity mask, sum);
2. labels only one operand has and the output lacks are summed away at once;
3. operands are contracted pairwise from left to right: labels both share and still need
   are batch dims, shared labels nobody needs later are the contraction, the rest are the
   rows and columns of one batched matmul (an elementwise product when nothing contracts);
4. what remains is summed over labels the output lacks and transposed into its order.

Sizes may be dynamic (they are read with `em.shape` where unknown while tracing); ranks
must be known.
"""

from __future__ import annotations

import builtins
import string

from ember.dialects.ember import dtypes
from ember.frontend import ops
from ember.frontend.effects import assert_true
from ember.frontend.tensor import convert_to_tensor

_LETTERS = frozenset(string.ascii_letters)


class _Parsed:
    """An equation with its ellipses expanded: a label list per operand and the output's.
    Letters are labels themselves; ellipsis dim i (counted from the right) is ('...', i)."""

    def __init__(self, inputs: list[list], output: list):
        self.inputs, self.output = inputs, output


def _fail(equation: str, why: str):
    raise ValueError(f"em.einsum: invalid equation {equation!r}: {why}")


def _split_term(equation: str, term: str, what: str) -> bool:
    """Whether one side of the equation has '...' (after checking its characters)."""
    if term.count("...") > 1:
        _fail(equation, f"{what} {term!r} has more than one '...'")
    has_ellipsis = "..." in term
    letters = term.replace("...", "")
    bad = sorted(set(letters) - _LETTERS)
    if bad:
        _fail(equation, f"{what} {term!r} has {bad[0]!r}; labels are letters a-z, A-Z "
                        f"and one '...'")
    return has_ellipsis


def _expand(term: str, rank: int, ellipsis_rank: int | None) -> list:
    head, _, tail = term.partition("...")
    if "..." not in term:
        return list(term)
    count = rank - len(head) - len(tail) if ellipsis_rank is None else ellipsis_rank
    return list(head) + [("...", count - 1 - i) for i in builtins.range(count)] + list(tail)


def parse(equation: str, ranks: list[int]) -> _Parsed:
    """Parses `equation` for operands of `ranks`; raises ValueError naming what is wrong."""
    if not isinstance(equation, str):
        raise TypeError(f"em.einsum: equation must be a str, got {type(equation).__name__}")
    eq = equation.replace(" ", "")
    if eq.count("->") > 1:
        _fail(equation, "more than one '->'")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(ranks):
        _fail(equation, f"it names {len(terms)} operand(s) but {len(ranks)} were given")
    widest, inputs = 0, []
    for n, (term, rank) in enumerate(zip(terms, ranks)):
        has_ellipsis = _split_term(equation, term, f"operand {n}")
        named = len(term.replace("...", ""))
        if named > rank or (named != rank and not has_ellipsis):
            _fail(equation, f"operand {n} has rank {rank} but its subscripts {term!r} "
                            f"name {named} dim(s)")
        if has_ellipsis:
            widest = max(widest, rank - named)
        inputs.append(_expand(term, rank, None))
    if arrow:
        out_ellipsis = _split_term(equation, rhs, "output")
        out_letters = rhs.replace("...", "")
        for label in out_letters:
            if out_letters.count(label) > 1:
                _fail(equation, f"output label {label!r} appears more than once")
            if not any(label in term for term in terms):
                _fail(equation, f"output label {label!r} is in no input")
        if widest and not out_ellipsis:
            _fail(equation, f"the inputs have {widest} '...' dim(s) but the output has no "
                            f"'...' to put them in (TensorFlow's rule)")
        output = _expand(rhs, 0, widest) if out_ellipsis else list(rhs)
    else:
        letters = [c for term in terms for c in term.replace("...", "")]
        once = sorted(c for c in set(letters) if letters.count(c) == 1)
        output = _expand("..." + "".join(once), 0, widest)
    return _Parsed(inputs, output)


def _size(x, axis: int):
    """The static size of dim `axis`, or a scalar tensor when unknown while tracing."""
    size = x.shape[axis]
    return size if size is not None else ops.shape(x)[axis]


def _sizes(x) -> list:
    return [_size(x, k) for k in builtins.range(x.shape.rank)]


def _product(sizes: list):
    """The product of ints and scalar tensors (an int while every size is static)."""
    out = 1
    for s in sizes:
        out = out * s
    return out


def _check_sizes(equation: str, operands: list, labels: list[list]) -> None:
    """Named labels must agree in size everywhere (TensorFlow's rule); '...' dims broadcast.
    A label with a `?` size is checked when the code runs (the products and sums it is
    built from would stretch a size 1 where eager raises)."""
    seen: dict = {}
    where: dict = {}  # named label -> [(operand, axis, operand number)]
    for n, (x, names) in enumerate(zip(operands, labels)):
        for axis, label in enumerate(names):
            if not isinstance(label, tuple):
                where.setdefault(label, []).append((x, axis, n))
            size = x.shape[axis]
            if size is None:
                continue
            if label in seen and isinstance(label, tuple):
                if 1 not in (size, seen[label][0]) and size != seen[label][0]:
                    _fail(equation, f"'...' dims of operands {seen[label][1]} and {n} do not "
                                    f"broadcast ({seen[label][0]} against {size})")
                if size == 1:
                    continue
            elif label in seen and seen[label][0] != size:
                _fail(equation, f"label {label!r} has size {seen[label][0]} at dim "
                                f"{seen[label][2]} of operand {seen[label][1]} but {size} at "
                                f"dim {axis} of operand {n}")
            seen[label] = (size, n, axis)
    for label, places in where.items():
        if len(places) < 2 or all(x.shape[axis] is not None for x, axis, _ in places):
            continue
        x0, axis0, n0 = places[0]
        for x, axis, n in places[1:]:
            assert_true(ops.equal(ops.shape(x0)[axis0], ops.shape(x)[axis]),
                        f"em.einsum: invalid equation {equation!r}: label {label!r} differs "
                        f"in size between operands {n0} and {n}")


def _diagonal(x, names: list) -> tuple:
    """Takes the diagonal over every label repeated in `names`."""
    while True:
        repeated = next((lab for lab in names if names.count(lab) > 1), None)
        if repeated is None:
            return x, names
        i = names.index(repeated)
        j = names.index(repeated, i + 1)
        rest = [k for k in builtins.range(len(names)) if k not in (i, j)]
        x = _arrange(x, list(builtins.range(len(names))), rest + [i, j])
        n = _size(x, -1)
        rows = ops.expand_dims(ops.range(n), 1)
        mask = ops.cast(ops.equal(rows, ops.range(n)), x.dtype)
        x = ops.reduce_sum(x * mask, axis=-1)
        names = [names[k] for k in rest] + [repeated]


def _sum_away(x, names: list, keep) -> tuple:
    axes = [k for k, lab in enumerate(names) if lab not in keep]
    if not axes:
        return x, names
    return ops.reduce_sum(x, axis=axes), [lab for lab in names if lab in keep]


def _squeeze_broadcast(x, names: list, other, other_names: list) -> tuple:
    """Drops size-1 '...' dims of `x` that `other` has bigger: they only broadcast."""
    drop = [k for k, lab in enumerate(names)
            if isinstance(lab, tuple) and x.shape[k] == 1 and lab in other_names
            and other.shape[other_names.index(lab)] not in (1, None)]
    if not drop:
        return x, names
    return ops.squeeze(x, drop), [lab for k, lab in enumerate(names) if k not in drop]


def _arrange(x, names: list, order: list):
    perm = [names.index(lab) for lab in order]
    return x if perm == list(builtins.range(len(perm))) else ops.transpose(x, perm)


def _contract(a, la: list, b, lb: list, keep) -> tuple:
    """One pairwise step: a (labels la) times b (labels lb), keeping labels in `keep`."""
    a, la = _squeeze_broadcast(a, la, b, lb)
    b, lb = _squeeze_broadcast(b, lb, a, la)
    a, la = _sum_away(a, la, set(lb) | keep)
    b, lb = _sum_away(b, lb, set(la) | keep)
    batch = [lab for lab in la if lab in lb and lab in keep]
    summed = [lab for lab in la if lab in lb and lab not in keep]
    rows = [lab for lab in la if lab not in lb]
    cols = [lab for lab in lb if lab not in la]
    nb = len(batch)
    if not summed:  # an elementwise product: [batch, rows, 1..] * [batch, 1.., cols]
        a, b = _arrange(a, la, batch + rows), _arrange(b, lb, batch + cols)
        if cols:
            a = ops.reshape(a, _sizes(a) + [1] * len(cols))
        if rows:
            b = ops.reshape(b, _sizes(b)[:nb] + [1] * len(rows) + _sizes(b)[nb:])
        return a * b, batch + rows + cols
    # a is [batch, rows, summed] (or [batch, summed, rows] read with transpose_a), b is
    # [batch, summed, cols] (or [batch, cols, summed] with transpose_b): no copy when the
    # operand already has one of the two orders
    t_a = la != batch + rows + summed and la == batch + summed + rows
    t_b = lb != batch + summed + cols and lb == batch + cols + summed
    oa = batch + (summed + rows if t_a else rows + summed)
    ob = batch + (cols + summed if t_b else summed + cols)
    a, b = _arrange(a, la, oa), _arrange(b, lb, ob)
    a_sizes, b_sizes = _sizes(a), _sizes(b)
    row_sizes = [a_sizes[oa.index(lab)] for lab in rows]
    col_sizes = [b_sizes[ob.index(lab)] for lab in cols]
    k = _product([a_sizes[oa.index(lab)] for lab in summed])
    m, n = _product(row_sizes), _product(col_sizes)
    # one row, column and contracted label each: already a matrix, no reshape needed
    if (len(rows), len(summed)) != (1, 1):
        a = ops.reshape(a, a_sizes[:nb] + ([k, m] if t_a else [m, k]))
    if (len(cols), len(summed)) != (1, 1):
        b = ops.reshape(b, b_sizes[:nb] + ([n, k] if t_b else [k, n]))
    out = ops.matmul(a, b, transpose_a=t_a, transpose_b=t_b)
    if (len(rows), len(cols)) != (1, 1):
        out = ops.reshape(out, _sizes(out)[:nb] + row_sizes + col_sizes)
    return out, batch + rows + cols


def einsum(equation, *inputs, **kwargs):
    """Einstein summation over `inputs` as `equation` says (tf.einsum).

    `'ij,jk->ik'` is a matrix product; without `->` the output is the labels that appear
    once, sorted, after any `...`. A label repeated on one operand takes its diagonal;
    labels missing from the output are summed. `...` dims broadcast (size 1 against n).
    As in TensorFlow (numpy differs), named labels must have equal sizes everywhere; an
    explicit output must have '...' when the inputs have '...' dims.

    Example:
      >>> import ember as em
      >>> em.einsum("ij,jk->ik", em.ones([2, 3]), em.ones([3, 4])).shape
      TensorShape([2, 4])
    """
    kwargs.pop("name", None)
    kwargs.pop("optimize", None)
    if kwargs:
        raise TypeError(f"em.einsum got unexpected keyword arguments {sorted(kwargs)}")
    if not inputs:
        raise ValueError(f"em.einsum: equation {equation!r} needs at least one operand")
    operands = [convert_to_tensor(x) for x in inputs]
    for n, x in enumerate(operands):
        if x.shape.rank is None:
            raise ValueError(f"em.einsum: operand {n} of {equation!r} needs a known rank")
    dtype = operands[0].dtype
    if dtype not in dtypes.NUMERIC:
        raise TypeError(f"em.einsum: operands of {equation!r} are {dtype.name}; einsum needs "
                        f"integer or float operands (cast them first)")
    for n, x in enumerate(operands[1:], 1):
        if x.dtype != dtype:
            raise TypeError(f"em.einsum: operand {n} of {equation!r} is {x.dtype.name} but "
                            f"operand 0 is {dtype.name}; cast them to one dtype")
    parsed = parse(equation, [x.shape.rank for x in operands])
    _check_sizes(equation, operands, parsed.inputs)
    output = parsed.output
    terms = []
    for n, (x, names) in enumerate(zip(operands, parsed.inputs)):
        x, names = _diagonal(x, names)
        others = {lab for m, ls in enumerate(parsed.inputs) if m != n for lab in ls}
        terms.append(_sum_away(x, names, others | set(output)))
    x, names = terms[0]
    for n in builtins.range(1, len(terms)):
        later = {lab for _, ls in terms[n + 1:] for lab in ls}
        x, names = _contract(x, names, *terms[n], later | set(output))
    x, names = _sum_away(x, names, set(output))
    return _arrange(x, names, output)


def tensordot(a, b, axes, name=None):
    """Sums the product of `a` and `b` over `axes` (tf.tensordot): an int N contracts the
    last N dims of `a` with the first N of `b`; a pair of lists names the dims of each.

    Example:
      >>> import ember as em
      >>> em.tensordot(em.ones([2, 3, 4]), em.ones([4, 3, 5]), [[1, 2], [1, 0]]).shape
      TensorShape([2, 5])
    """
    del name
    a, b = convert_to_tensor(a), convert_to_tensor(b)
    if a.shape.rank is None or b.shape.rank is None:
        raise ValueError("em.tensordot needs operands of known rank")
    ra, rb = a.shape.rank, b.shape.rank
    if isinstance(axes, int) or (hasattr(axes, "__index__") and not isinstance(axes, list)):
        n = int(axes)
        if not 0 <= n <= min(ra, rb):
            raise ValueError(f"em.tensordot: axes={n} must be in [0, {min(ra, rb)}] for "
                             f"ranks {ra} and {rb}")
        axes_a, axes_b = list(builtins.range(ra - n, ra)), list(builtins.range(n))
    else:
        if len(axes) != 2:
            raise ValueError(f"em.tensordot: axes must be an int or a pair of lists, got "
                             f"{axes!r}")
        axes_a, axes_b = ([int(v) for v in ([s] if isinstance(s, int) else s)] for s in axes)
        if len(axes_a) != len(axes_b):
            raise ValueError(f"em.tensordot: {len(axes_a)} axes of a but {len(axes_b)} of b")
        for which, ax, rank in (("a", axes_a, ra), ("b", axes_b, rb)):
            if any(not -rank <= v < rank for v in ax):
                raise ValueError(f"em.tensordot: axes {ax} out of range for {which} of "
                                 f"rank {rank}")
        axes_a, axes_b = [v % ra for v in axes_a], [v % rb for v in axes_b]
    if ra + rb - len(axes_a) > len(_LETTERS):
        raise ValueError("em.tensordot: too many dims")
    letters = sorted(_LETTERS)
    la, lb = letters[:ra], letters[ra:ra + rb]
    for i, j in zip(axes_a, axes_b):
        lb[j] = la[i]
    out = [c for k, c in enumerate(la) if k not in axes_a] + \
        [c for k, c in enumerate(lb) if k not in axes_b]
    return einsum("".join(la) + "," + "".join(lb) + "->" + "".join(out), a, b)
