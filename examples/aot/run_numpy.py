"""Runs the compiled digits MLP with only numpy and the artifact (no Ember, no MLIR):

    python run_numpy.py DIR      (DIR: where digits_model.py wrote the library)

It imports the loader that em.aot.compile copied into DIR, which checks the manifest and
the files' hashes before it loads the library, and prints what main.c prints.
"""

import sys

import numpy as np

folder = sys.argv[1] if len(sys.argv) > 1 else "build/aot_digits"
sys.path.insert(0, folder)
import ember_aot_loader  # noqa: E402  (from the artifact's folder)

predict = ember_aot_loader.load(folder)
k = np.arange(64)
images = np.stack([((13 * i + k) % 17) / 16.0 for i in range(4)]).astype(np.float32)
logits, classes = predict(images.reshape(4, 8, 8, 1))
for i, c in enumerate(classes):
    print(f"image {i}: class {c}, logit {logits[i, c]:.6f}")
