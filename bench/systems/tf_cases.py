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


def train_step(arrays):
    """Case E: GradientTape and assign_sub on tf.Variables in one tf.function."""
    x, labels = tf.constant(arrays[0]), tf.constant(arrays[1])
    params = [tf.Variable(a) for a in arrays[2:]]

    @tf.function
    def step(x, labels):
        w1, b1, w2, b2, w3, b3 = params
        with tf.GradientTape() as tape:
            h = tf.nn.relu(tf.matmul(x, w1) + b1)
            h = tf.nn.relu(tf.matmul(h, w2) + b2)
            logits = tf.matmul(h, w3) + b3
            loss = tf.reduce_mean(
                tf.nn.sparse_softmax_cross_entropy_with_logits(labels, logits))
        grads = tape.gradient(loss, params)
        for p, g in zip(params, grads):
            p.assign_sub(common.LEARNING_RATE * g)
        return loss

    return (lambda: step(x, labels)), (lambda: [p.numpy() for p in params])


def to_numpy(out):
    return out.numpy()


if __name__ == "__main__":
    common.main(__import__(__name__), "tf.function", tf.__version__)
