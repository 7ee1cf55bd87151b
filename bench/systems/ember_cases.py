"""Ember: em.function, compiled per static input shape by the CPU backend."""
import importlib.util

import common  # first: starts the import clock
import ember as em

# Case G's "Ember's own kernel" figure means something only when this ember has them (with
# EMBER_BLAS=off they replace OpenBLAS); bench/gemm.py says so when they are missing.
INFO = {"own_gemm_kernels": importlib.util.find_spec("ember.backends.cpu.kernels") is not None}

PROGRAMS = common.programs(em.tanh, em.sin, em.relu, em.matmul)


def convert(arrays):
    return [em.constant(a) for a in arrays]


def compile(case):
    return em.function(PROGRAMS[case])


def run(fn, args):
    return fn(*args)


def train_step(arrays):
    """Case E: one em.function reads the weights (em.Variables), takes the loss's gradients
    with em.GradientTape, and applies SGD with assign_sub."""
    x, labels = em.constant(arrays[0]), em.constant(arrays[1])
    params = [em.Variable(a) for a in arrays[2:]]
    lr = common.LEARNING_RATE

    @em.function
    def step(x, labels):
        w1, b1, w2, b2, w3, b3 = params
        with em.GradientTape() as tape:
            h = em.nn.relu(em.matmul(x, w1) + b1)
            h = em.nn.relu(em.matmul(h, w2) + b2)
            logits = em.matmul(h, w3) + b3
            loss = em.reduce_mean(
                em.nn.sparse_softmax_cross_entropy_with_logits(labels, logits))
        for p, g in zip(params, tape.gradient(loss, params)):
            p.assign_sub(lr * g)
        return loss

    return (lambda: step(x, labels)), (lambda: [p.numpy() for p in params])


def to_numpy(out):
    return out.numpy()


if __name__ == "__main__":
    common.main(__import__(__name__), "ember", em.__version__)
