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


def to_numpy(out):
    return out.numpy()


if __name__ == "__main__":
    common.main(__import__(__name__), "ember", em.__version__)
