"""JAX: jax.jit on the CPU (asynchronous dispatch: every call blocks until ready)."""
import os

os.environ.setdefault("JAX_PLATFORMS", "cpu")
import common  # noqa: E402  first: starts the import clock
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

PROGRAMS = common.programs(jnp.tanh, jnp.sin, jax.nn.relu, jnp.matmul)


def convert(arrays):
    return [jax.device_put(a) for a in arrays]


def compile(case):
    return jax.jit(PROGRAMS[case])


def run(fn, args):
    return fn(*args).block_until_ready()


def _loss(params, x, labels):
    w1, b1, w2, b2, w3, b3 = params
    h = jax.nn.relu(x @ w1 + b1)
    h = jax.nn.relu(h @ w2 + b2)
    logp = jax.nn.log_softmax(h @ w3 + b3)
    return -jnp.mean(jnp.take_along_axis(logp, labels[:, None], axis=1))


def _sgd_step(params, x, labels):
    loss, grads = jax.value_and_grad(_loss)(params, x, labels)
    return loss, [p - common.LEARNING_RATE * g for p, g in zip(params, grads)]


def train_step(arrays):
    """Case E: value_and_grad and the update in one jax.jit, the old parameters donated
    (their buffers reused for the new ones)."""
    x, labels, *params = convert(arrays)
    state = {"params": params}
    step = jax.jit(_sgd_step, donate_argnums=0)

    def run():
        loss, state["params"] = step(state["params"], x, labels)
        return jax.block_until_ready((loss, state["params"]))[0]

    return run, lambda: [np.asarray(p) for p in state["params"]]


def to_numpy(out):
    return np.asarray(out)


if __name__ == "__main__":
    common.main(__import__(__name__), "jax.jit", jax.__version__)
