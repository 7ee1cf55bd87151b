"""The digits MLP of examples/train_digits.py (8x8 images -> 10 classes), compiled ahead of
time into a library that C (main.c) and a numpy-only Python (run_numpy.py) can call.

    python examples/aot/digits_model.py --out build/aot_digits [--train]
or, the same from the command line:
    ember-compile examples/aot/digits_model.py:predict --out build/aot_digits --name digits

`--train` first trains the model on scikit-learn's digits (needs the `examples` extra);
without it the weights are the seeded initial ones, enough to show the calls agree.
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np

# The JIT's products on Ember's own kernels, as the library has them: what it prints below
# is then what main.c prints, to the last bit (else a shape may go to numpy's OpenBLAS).
os.environ.setdefault("EMBER_BLAS", "off")

import ember as em  # noqa: E402

em.random.set_seed(0)
model = em.Sequential([em.layers.Flatten(), em.layers.Dense(256, activation="relu"),
                       em.layers.Dropout(0.2), em.layers.Dense(10)], name="mlp")
model(np.zeros((1, 8, 8, 1), np.float32))  # creates the weights now, not while tracing


@em.function(input_signature=[em.TensorSpec([None, 8, 8, 1], em.float32, name="images")])
def predict(images):
    """Logits and predicted class of a batch of any size (a `?` dim in the C API)."""
    logits = model(images)
    return logits, em.argmax(logits, axis=-1, output_type=em.int32)


def sample_images(count: int = 4) -> np.ndarray:
    """The inputs main.c and run_numpy.py use: pixel k of image i is ((13 i + k) % 17) / 16."""
    k = np.arange(64)
    return np.stack([((13 * i + k) % 17) / 16.0 for i in range(count)]).astype(
        np.float32).reshape(count, 8, 8, 1)


def report(logits: np.ndarray, classes: np.ndarray) -> str:
    """What main.c prints: one line per image."""
    return "".join(f"image {i}: class {c}, logit {logits[i, c]:.6f}\n"
                   for i, c in enumerate(classes))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=os.path.join("build", "aot_digits"))
    parser.add_argument("--train", action="store_true", help="train on sklearn's digits first")
    args = parser.parse_args(argv)
    if args.train:
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
        import train_digits
        data = train_digits.load_data(0)
        _, accuracy = train_digits.train("MLP", model, data, 20, 32, 1e-3, 0)
        print(f"trained: test accuracy {accuracy:.2%}")
    em.aot.compile(predict, out_dir=args.out, name="digits")
    print(f"wrote {args.out}; the JIT on the sample images:")
    logits, classes = predict(sample_images())
    print(report(logits.numpy(), classes.numpy()), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
