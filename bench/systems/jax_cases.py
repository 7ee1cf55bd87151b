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


def to_numpy(out):
    return np.asarray(out)


if __name__ == "__main__":
    common.main(__import__(__name__), "jax.jit", jax.__version__)
