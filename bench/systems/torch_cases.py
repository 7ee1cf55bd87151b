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


def _loss(params, x, labels):
    w1, b1, w2, b2, w3, b3 = params
    h = torch.relu(x @ w1 + b1)
    h = torch.relu(h @ w2 + b2)
    return torch.nn.functional.cross_entropy(h @ w3 + b3, labels)


def train_step(arrays):
    """Case E: torch.func.grad_and_value and the in-place SGD update in one torch.compile
    (one graph: forward, backward and update)."""
    x = torch.from_numpy(arrays[0])
    labels = torch.from_numpy(arrays[1]).long()  # cross_entropy's class indices are int64
    params = [torch.from_numpy(a.copy()) for a in arrays[2:]]

    @torch.compile
    def step(params, x, labels):
        grads, loss = torch.func.grad_and_value(_loss)(params, x, labels)
        with torch.no_grad():
            for p, g in zip(params, grads):
                p.sub_(common.LEARNING_RATE * g)
        return loss

    return (lambda: step(params, x, labels)), (lambda: [p.numpy() for p in params])


def to_numpy(out):
    return out.numpy()


if __name__ == "__main__":
    common.main(__import__(__name__), "torch.compile", torch.__version__)
