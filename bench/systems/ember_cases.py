"""Ember: em.function, compiled per static input shape by the CPU backend."""
import common  # first: starts the import clock
import ember as em

PROGRAMS = common.programs(em.tanh, em.sin, em.relu, em.matmul)


def convert(arrays):
    return [em.constant(a) for a in arrays]


def compile(case):
    return em.function(PROGRAMS[case])


def run(fn, args):
    return fn(*args)


def train_step(arrays):
    """Case E: one em.function reads the weights (em.Variables), computes the loss and its
    gradients, and applies SGD with assign_sub."""
    x, labels = em.constant(arrays[0]), em.constant(arrays[1])
    params = [em.Variable(a) for a in arrays[2:]]
    lr = common.LEARNING_RATE

    @em.function
    def step(x, labels):
        w1, b1, w2, b2, w3, b3 = [p.read_value() for p in params]
        # The backward pass written out, until em.GradientTape lands.
        h1 = em.nn.relu(em.matmul(x, w1) + b1)
        h2 = em.nn.relu(em.matmul(h1, w2) + b2)
        logits = em.matmul(h2, w3) + b3
        logp = logits - em.math.reduce_logsumexp(logits, axis=1, keepdims=True)
        hot = em.one_hot(labels, common.MLP_DIMS[-1])
        loss = -em.reduce_mean(em.reduce_sum(hot * logp, axis=1))
        d3 = (em.exp(logp) - hot) * (1 / common.MLP_BATCH)
        d2 = em.where(h2 > 0, em.matmul(d3, w3, transpose_b=True), 0.0)
        d1 = em.where(h1 > 0, em.matmul(d2, w2, transpose_b=True), 0.0)
        grads = [em.matmul(x, d1, transpose_a=True), em.reduce_sum(d1, axis=0),
                 em.matmul(h1, d2, transpose_a=True), em.reduce_sum(d2, axis=0),
                 em.matmul(h2, d3, transpose_a=True), em.reduce_sum(d3, axis=0)]
        for p, g in zip(params, grads):
            p.assign_sub(lr * g)
        return loss

    return (lambda: step(x, labels)), (lambda: [p.numpy() for p in params])


def to_numpy(out):
    return out.numpy()


if __name__ == "__main__":
    common.main(__import__(__name__), "ember", em.__version__)
