"""PyTorch: torch.compile (inductor, default mode) on the CPU."""
import common  # first: starts the import clock
import torch

PROGRAMS = common.programs(torch.tanh, torch.sin, torch.relu, torch.matmul)


def convert(arrays):
    return [torch.from_numpy(a) for a in arrays]


def compile(case):
    return torch.compile(PROGRAMS[case])


def run(fn, args):
    with torch.no_grad():
        return fn(*args)


def to_numpy(out):
    return out.numpy()


if __name__ == "__main__":
    common.main(__import__(__name__), "torch.compile", torch.__version__)
