"""A worker of test_keras_fit_mirrored: Model.fit under MultiWorkerMirroredStrategy (the data
distributed by fit itself, auto-sharded between the workers), then evaluate. Worker 0 prints
the history, the evaluation and the final weights as JSON.

Run: python -m ember.distribute.launch -n N tests/distribute/mw_keras_fit_worker.py
"""

import json
import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

import ember as em  # noqa: E402


def main() -> None:
    strategy = em.distribute.MultiWorkerMirroredStrategy()
    rng = np.random.default_rng(0)
    x = rng.normal(size=(96, 3)).astype(np.float32)
    y = (x[:, 0] - x[:, 1] > 0).astype(np.int64)
    with strategy.scope():
        em.random.set_seed(0)
        model = em.keras.Sequential([em.keras.layers.Dense(8, activation="relu"),
                                     em.keras.layers.Dense(2)])
        model.compile(optimizer=em.optimizers.Adam(0.05), metrics=["accuracy"],
                      loss=em.losses.SparseCategoricalCrossentropy(from_logits=True))
    dataset = em.data.Dataset.from_tensor_slices((x, y)).batch(16)
    history = model.fit(dataset, epochs=3, verbose=0)
    evaluation = model.evaluate(dataset, verbose=0)
    predictions = model.predict(x, batch_size=40, verbose=0)  # every worker: all 96 rows
    if strategy.extended.should_checkpoint:
        print(json.dumps({"workers": strategy.cluster_resolver.num_workers,
                          "history": history.history, "evaluation": evaluation,
                          "predictions": predictions.tolist(),
                          "weights": [w.ravel().tolist() for w in model.get_weights()]}),
              flush=True)


if __name__ == "__main__":
    main()
