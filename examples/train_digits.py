"""Trains an MLP and a small CNN on scikit-learn's handwritten digits (8x8 images, 1797
samples), with compiled `@em.function` train steps: `em.GradientTape` + an `em.optimizers`
optimizer, as the tf.wiki MLP and CNN tutorials do for MNIST (the models scaled to 8x8).

Needs the optional extra: `pip install -e '.[examples]'` (scikit-learn, tqdm, matplotlib).
Run: `python examples/train_digits.py [--out build/train_digits/]`. It shows a progress bar
per epoch, writes the loss curves to `loss_curve.png` and `loss_curve.csv` in the output
directory, and prints the test accuracies and the wall time.
"""

from __future__ import annotations

import argparse
import csv
import os
import sys
import time

START = time.perf_counter()  # the wall time printed at the end includes the imports

# The matrices here are small (32 x 512 at most): one BLAS thread runs them as fast as two,
# and OpenBLAS threads spin-wait when other processes share the cores, costing ~30 ms per
# product. Set before numpy loads OpenBLAS; an explicit setting wins.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

import ember as em  # noqa: E402


def load_data(seed: int):
    """Digits scaled to [0, 1] as NHWC images, split 80/20 (stratified) into train/test."""
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split
    digits = load_digits()
    images = (digits.images / 16.0).astype(np.float32)[..., None]
    labels = digits.target.astype(np.int32)
    return train_test_split(images, labels, test_size=0.2, random_state=seed,
                            stratify=labels)


def mlp():
    """tf.wiki's MLP (flatten, one hidden ReLU layer, 10 logits), its hidden layer widened
    from 100 to 256 units and regularised by dropout: 1437 training images are few."""
    return em.Sequential([em.layers.Flatten(),
                          em.layers.Dense(256, activation="relu"),
                          em.layers.Dropout(0.2),
                          em.layers.Dense(10)], name="mlp")


def cnn():
    """tf.wiki's CNN (conv, pool, conv, pool, dense, logits) scaled to 8x8 inputs: 3x3
    kernels, half the filters, and no second pooling (it would leave 2x2 pixels)."""
    return em.Sequential([
        em.layers.Conv2D(16, 3, padding="same", activation="relu"),  # 8x8x16
        em.layers.MaxPool2D(2),                                       # 4x4x16
        em.layers.Conv2D(32, 3, padding="same", activation="relu"),  # 4x4x32
        em.layers.Flatten(),                                          # 512
        em.layers.Dense(128, activation="relu"),
        em.layers.Dropout(0.3),
        em.layers.Dense(10),
    ], name="cnn")


def shifted(images, rng):
    """Each image moved by -1, 0 or +1 pixel in each direction (zeros shifted in): the
    usual augmentation for digits, fresh every epoch."""
    n = len(images)
    padded = np.pad(images, [(0, 0), (1, 1), (1, 1), (0, 0)])
    rows = rng.integers(0, 3, n)[:, None] + np.arange(8)
    cols = rng.integers(0, 3, n)[:, None] + np.arange(8)
    return padded[np.arange(n)[:, None, None], rows[:, :, None], cols[:, None, :]]


def train(name, model, data, epochs, batch_size, learning_rate, seed, augment=False):
    """Trains `model` with Adam (on shifted images with `augment`); returns (per-step
    losses, test accuracy)."""
    from tqdm import tqdm
    x_train, x_test, y_train, y_test = data
    loss_fn = em.losses.SparseCategoricalCrossentropy(from_logits=True)
    optimizer = em.optimizers.Adam(learning_rate)

    @em.function
    def train_step(x, y):
        with em.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    @em.function
    def predict(x):
        return em.argmax(model(x), axis=-1, output_type=em.int32)

    rng = np.random.default_rng(seed)
    steps = len(x_train) // batch_size  # full batches only: one traced shape
    losses = []
    for epoch in range(1, epochs + 1):
        order = rng.permutation(len(x_train))
        images = shifted(x_train, rng) if augment else x_train
        bar = tqdm(range(steps), desc=f"{name} epoch {epoch:2d}/{epochs}", leave=False,
                   file=sys.stderr, mininterval=0.2)
        for i in bar:
            batch = order[i * batch_size:(i + 1) * batch_size]
            losses.append((epoch, float(train_step(images[batch], y_train[batch]))))
            if i % 10 == 0:
                bar.set_postfix(loss=f"{losses[-1][1]:.4f}")
        bar.close()
    accuracy = float(np.mean(predict(x_test).numpy() == y_test))
    return losses, accuracy


def write_curves(out_dir, curves):
    """loss_curve.csv (model, epoch, step, loss) and loss_curve.png."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "loss_curve.csv"), "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["model", "epoch", "step", "loss"])
        for name, losses in curves.items():
            for step, (epoch, loss) in enumerate(losses, start=1):
                writer.writerow([name, epoch, step, f"{loss:.6f}"])
    fig, ax = plt.subplots(figsize=(7, 4))
    for name, losses in curves.items():
        if not losses:
            continue
        values = np.array([loss for _, loss in losses])
        window = min(10, len(values))
        smooth = np.convolve(values, np.ones(window) / window, mode="valid")
        ax.plot(np.arange(1, len(values) + 1), values, alpha=0.25)
        ax.plot(np.arange(window, len(values) + 1), smooth, label=f"{name} (mean of {window})",
                color=ax.lines[-1].get_color())
    ax.set(xlabel="step", ylabel="training loss", yscale="log",
           title="Ember on scikit-learn digits")
    ax.legend()
    fig.tight_layout()
    fig.savefig(os.path.join(out_dir, "loss_curve.png"), dpi=120)
    plt.close(fig)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=os.path.join("build", "train_digits"),
                        help="output directory for loss_curve.png/.csv")
    parser.add_argument("--mlp-epochs", type=int, default=40)
    parser.add_argument("--cnn-epochs", type=int, default=30)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    start = START
    em.random.set_seed(args.seed)
    data = load_data(args.seed)
    curves, accuracies = {}, {}
    runs = (("MLP", mlp, args.mlp_epochs, 1e-3, False),
            ("CNN", cnn, args.cnn_epochs, 2e-3, True))
    for name, make, epochs, learning_rate, augment in runs:
        curves[name], accuracies[name] = train(name, make(), data, epochs, args.batch_size,
                                               learning_rate, args.seed, augment)
        print(f"{name}: test accuracy {accuracies[name]:.2%} after {epochs} epochs "
              f"({time.perf_counter() - start:.1f} s so far)")
    write_curves(args.out, curves)
    elapsed = time.perf_counter() - start
    print(f"MLP test accuracy: {accuracies['MLP']:.2%}")
    print(f"CNN test accuracy: {accuracies['CNN']:.2%}")
    print(f"wall time: {elapsed:.1f} s, imports included (loss curves in {args.out})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
