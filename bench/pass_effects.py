"""Op counts before and after `ember-optimize` for representative traced programs.

Run: `.venv/bin/python bench/pass_effects.py` (or `make bench-passes`). Prints a table:
program, ops traced, ops after optimisation, the change, and the counters each pass
reported (folded, hoisted, eliminated, erased, ...). Counts are of operations inside
functions (constants included), so they compare like for like.
"""

from __future__ import annotations

import numpy as np

import ember as em
from ember.dialects.ember.irdl import default_context
from ember.dialects.ember.verifier import iter_ops
from mlir import ir


def count_ops(text: str) -> int:
    with default_context():
        module = ir.Module.parse(text)
    return sum(1 for op in module.body.operations for _ in iter_ops(op.operation))


# -- the tf.function guide's examples ---------------------------------------------------

def guide_add():
    @em.function
    def add(a, b):
        return a + b
    return add.get_concrete_function(em.TensorSpec([2, 2]), em.TensorSpec([2, 2]))


def guide_dense_layer():
    @em.function
    def dense_layer(x, w, b):
        return add_inner(em.matmul(x, w), b)

    @em.function
    def add_inner(a, b):
        return a + b
    return dense_layer.get_concrete_function(em.TensorSpec([3, 2]), em.TensorSpec([2, 2]),
                                             em.TensorSpec([2]))


def guide_collatz():
    @em.function(input_signature=(em.TensorSpec(shape=[None], dtype=em.int32),))
    def next_collatz(x):
        return em.where(x % 2 == 0, x // 2, 3 * x + 1)
    return next_collatz.get_concrete_function()


def guide_train_loop():
    @em.function
    def train(num_steps):
        em.print("Executing with num_steps = ", num_steps)
        return em.while_loop(lambda i: i < num_steps, lambda i: (i + 1,),
                             (em.constant(0),))
    return train.get_concrete_function(em.TensorSpec([], em.int32))


def guide_python_loop_data():
    @em.function
    def train(dataset):
        loss = em.constant(0)
        for x, y in dataset:
            loss += em.abs(y - x)
        return loss
    return train.get_concrete_function([(1, 1)] * 10)


# -- models -----------------------------------------------------------------------------

def _mlp_params(sizes, rng):
    return [(em.Variable(rng.standard_normal((a, b)).astype(np.float32) * 0.1),
             em.Variable(np.zeros(b, np.float32))) for a, b in zip(sizes, sizes[1:])]


def mlp_forward():
    params = _mlp_params([784, 256, 128, 10], np.random.default_rng(0))

    @em.function
    def forward(x):
        h = x
        for i, (w, b) in enumerate(params):
            h = em.matmul(h, w) + b
            if i < len(params) - 1:
                h = em.relu(h)
        return em.softmax(h)
    return forward.get_concrete_function(em.TensorSpec([None, 784]))


def mlp_sgd_step():
    params = _mlp_params([784, 256, 128, 10], np.random.default_rng(1))
    lr = 0.01

    @em.function
    def step(x, labels):
        # forward, keeping activations
        acts, pre = [x], []
        for i, (w, b) in enumerate(params):
            z = em.matmul(acts[-1], w) + b
            pre.append(z)
            acts.append(em.relu(z) if i < len(params) - 1 else z)
        probs = em.softmax(acts[-1])
        onehot = em.one_hot(labels, 10)
        batch = em.cast(em.shape(x)[0], em.float32)
        loss = -em.reduce_sum(onehot * em.log(probs + 1e-9)) / batch
        # hand-written backward pass
        grad = (probs - onehot) / batch
        for i in reversed(range(len(params))):
            w, b = params[i]
            if i < len(params) - 1:
                grad = grad * em.cast(pre[i] > 0.0, em.float32)
            dw = em.matmul(acts[i], grad, transpose_a=True)
            db = em.reduce_sum(grad, axis=0)
            if i > 0:
                grad = em.matmul(grad, w, transpose_b=True)
            w.assign_sub(lr * dw)
            b.assign_sub(lr * db)
        return loss
    return step.get_concrete_function(em.TensorSpec([None, 784]),
                                      em.TensorSpec([None], em.int32))


PROGRAMS = [
    ("guide: add", guide_add),
    ("guide: dense_layer (nested)", guide_dense_layer),
    ("guide: next_collatz", guide_collatz),
    ("guide: train (while_loop)", guide_train_loop),
    ("guide: train on Python data", guide_python_loop_data),
    ("MLP forward 784-256-128-10", mlp_forward),
    ("MLP SGD step (hand backward)", mlp_sgd_step),
]


def main() -> None:
    rows = []
    for label, make in PROGRAMS:
        cf = make()
        before, after = count_ops(cf.mlir("traced")), count_ops(cf.mlir("optimized"))
        counters = []
        for pass_name, counts in cf.pass_statistics().items():
            for key, value in sorted(counts.items()):
                if value:
                    counters.append(f"{key}={value}")
        rows.append((label, before, after, ", ".join(counters) or "-"))
    width = max(len(r[0]) for r in rows)
    print(f"{'program':<{width}}  {'traced':>6}  {'optimized':>9}  {'change':>7}  pass counters")
    for label, before, after, counters in rows:
        change = f"{100.0 * (after - before) / before:+.0f}%" if before else "n/a"
        print(f"{label:<{width}}  {before:>6}  {after:>9}  {change:>7}  {counters}")


if __name__ == "__main__":
    main()
