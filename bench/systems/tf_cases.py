"""TensorFlow: tf.function (graph mode, no XLA), as in the issue's reference figures."""
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import common  # noqa: E402  first: starts the import clock
import tensorflow as tf  # noqa: E402

PROGRAMS = common.programs(tf.tanh, tf.sin, tf.nn.relu, tf.matmul)


def convert(arrays):
    return [tf.constant(a) for a in arrays]


def compile(case):
    return tf.function(PROGRAMS[case])


def run(fn, args):
    return fn(*args)


def to_numpy(out):
    return out.numpy()


if __name__ == "__main__":
    common.main(__import__(__name__), "tf.function", tf.__version__)
