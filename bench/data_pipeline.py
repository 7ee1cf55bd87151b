"""The em.data bench (issue 18, item 5): from_tensor_slices -> map -> batch -> prefetch, in
examples per second, against the same steps written in numpy and, when TensorFlow is
installed (the bench venv, `make bench-anchors`), the same tf.data pipeline. A benchmark,
not a test: it prints ratios and never fails on them.

    .venv/bin/python bench/data_pipeline.py        # or: make bench-data
    .venv-anchors/bin/python bench/data_pipeline.py --examples 20000

Every system normalises 784-float32 images (x / 255 * 2 - 1) and keeps int32 labels, in
batches of 64 with a prefetch of 2 (em.data's map once sequential, once with
num_parallel_calls=AUTOTUNE; tf.data's with AUTOTUNE); one epoch is timed after a warm-up
epoch, the median of --repeats epochs reported. Each system's batches are checked against
numpy's first.
"""

import argparse
import statistics
import time

import numpy as np

import ember as em

BATCH = 64


def numpy_epoch(images, labels):
    """The same steps in plain numpy, element by element as the pipelines do them."""
    batch_x, batch_y = [], []
    for i in range(len(images)):
        batch_x.append(images[i] / np.float32(255.0) * np.float32(2.0) - np.float32(1.0))
        batch_y.append(labels[i])
        if len(batch_x) == BATCH:
            yield np.stack(batch_x), np.stack(batch_y)
            batch_x, batch_y = [], []
    if batch_x:
        yield np.stack(batch_x), np.stack(batch_y)


def ember_pipeline(images, labels, num_parallel_calls=None):
    ds = em.data.Dataset.from_tensor_slices((images, labels))
    ds = ds.map(lambda x, y: (x / 255.0 * 2.0 - 1.0, y), num_parallel_calls=num_parallel_calls)
    return ds.batch(BATCH).prefetch(2)


def tf_pipeline(images, labels):
    try:
        import tensorflow as tf
    except ImportError:
        return None
    ds = tf.data.Dataset.from_tensor_slices((images, labels))
    ds = ds.map(lambda x, y: (x / 255.0 * 2.0 - 1.0, y), num_parallel_calls=tf.data.AUTOTUNE)
    return ds.batch(BATCH).prefetch(2)


def epoch_seconds(make_epoch, repeats):
    def one():
        start = time.perf_counter()
        for _ in make_epoch():
            pass
        return time.perf_counter() - start
    one()  # warm-up: tracing, compiling, thread start
    return statistics.median(one() for _ in range(repeats))


def check(name, batches, expected):
    for (x, y), (ex, ey) in zip(batches, expected):
        np.testing.assert_allclose(np.asarray(x), ex, rtol=1e-6, atol=1e-6,
                                   err_msg=f"{name}: images differ from numpy's")
        np.testing.assert_array_equal(np.asarray(y), ey, err_msg=f"{name}: labels differ")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=8192)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    images = rng.integers(0, 256, (args.examples, 784)).astype(np.float32)
    labels = rng.integers(0, 10, args.examples).astype(np.int32)
    expected = list(numpy_epoch(images, labels))

    systems = {"numpy": lambda: numpy_epoch(images, labels)}
    for name, calls in (("em.data", None), ("em.data AUTOTUNE", em.data.AUTOTUNE)):
        ember_ds = ember_pipeline(images, labels, calls)
        check(name, ember_ds.as_numpy_iterator(), expected)
        systems[name] = ember_ds.as_numpy_iterator
    tf_ds = tf_pipeline(images, labels)
    if tf_ds is not None:
        check("tf.data", tf_ds.as_numpy_iterator(), expected)
        systems["tf.data"] = tf_ds.as_numpy_iterator

    rates = {name: args.examples / epoch_seconds(make, args.repeats)
             for name, make in systems.items()}
    print(f"data pipeline: {args.examples} examples of 784 float32, batch {BATCH}, "
          "from_tensor_slices -> map -> batch -> prefetch")
    print(f"{'system':18s} {'examples/s':>12s} {'em.data / it':>14s}")
    for name, rate in rates.items():
        print(f"{name:18s} {rate:12,.0f} {rates['em.data'] / rate:14.2f}")
    if "tf.data" in rates:
        best = max(rates["em.data"], rates["em.data AUTOTUNE"])
        print(f"target (issue 18): em.data / tf.data >= 1.0: {best / rates['tf.data']:.2f}")
    else:
        print("tf.data: TensorFlow is not installed here (make bench-anchors installs it)")


if __name__ == "__main__":
    main()
