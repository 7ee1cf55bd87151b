"""The distributed input guide's tf.Transform snippet with `em.` (run by
test_tft_distributed.py in a subprocess whose CPU is split into 2 logical CPUs):

    with strategy.scope():
        tf_transform_output = tft.TFTransformOutput(working_dir)
        tft_layer = tf_transform_output.transform_features_layer()
    def dataset_fn(input_context):
        ...
        dataset.map(tft_layer, num_parallel_calls=tf.data.AUTOTUNE)
        ...
    distributed_dataset = strategy.distribute_datasets_from_function(dataset_fn)

The ANALYZE phase, which the guide leaves to a separate job, runs first (emt.analyze). The
preprocessing_fn is defined here, at the top level of `__main__`, so TFTransformOutput finds
it by the name the analysis recorded. Prints one JSON object: the raw data, and per step the
replicas' transformed batches.
"""

import json
import sys

import numpy as np

import ember as em
import ember.transform as emt

cpu = em.config.list_physical_devices("CPU")[0]
em.config.set_logical_device_configuration(cpu, [em.config.LogicalDeviceConfiguration()] * 2)

GLOBAL_BATCH = 8
rng = np.random.default_rng(7)
RAW = {
    "x": rng.normal(3.0, 2.0, size=40).astype(np.float32),
    "n": rng.integers(0, 100, size=40).astype(np.int64),
    "s": np.array([b"red", b"green", b"blue", b"red", b"green", b"red", b"teal", b"red"] * 5,
                  dtype=object),
}


def preprocessing_fn(inputs):
    return {
        "x_z": emt.scale_to_z_score(inputs["x"]),
        "n_01": emt.scale_to_0_1(inputs["n"]),
        "n_bucket": emt.bucketize(inputs["n"], 4),
        "s_id": emt.compute_and_apply_vocabulary(inputs["s"], vocab_filename="colour"),
        "x": em.identity(inputs["x"]),  # the raw values, to check each replica's batch
        "n": em.identity(inputs["n"]),
        "s": em.identity(inputs["s"]),
    }


def main(working_dir):
    raw = em.data.Dataset.from_tensor_slices(RAW)
    emt.analyze(preprocessing_fn, raw, working_dir, batch_size=16)

    strategy = em.distribute.MirroredStrategy(["cpu:0", "cpu:1"])
    with strategy.scope():
        # working_dir contains the tf.Transform output.
        tf_transform_output = emt.TFTransformOutput(working_dir)
        # Loading from working_dir to create a layer applying the transform to data
        tft_layer = tf_transform_output.transform_features_layer()

    def dataset_fn(input_context):
        batch_size = input_context.get_per_replica_batch_size(GLOBAL_BATCH)
        dataset = em.data.Dataset.from_tensor_slices(RAW)
        dataset = dataset.shard(input_context.num_input_pipelines,
                                input_context.input_pipeline_id)
        dataset = dataset.batch(batch_size)
        dataset = dataset.map(tft_layer, num_parallel_calls=em.data.AUTOTUNE)
        return dataset.prefetch(2)

    distributed_dataset = strategy.distribute_datasets_from_function(dataset_fn)

    @em.function
    def replica_sums(x_z, s_id):  # a compiled step over each replica's transformed batch
        return strategy.run(lambda z, i: em.reduce_sum(z) + em.cast(em.reduce_sum(i),
                                                                   em.float32),
                            args=(x_z, s_id))

    steps = []
    for batch in distributed_dataset:
        replicas = [{k: v.numpy().tolist() if k != "s" else
                     [t.decode() for t in v.numpy().tolist()] for k, v in local.items()}
                    for local in strategy.experimental_local_results(batch)]
        sums = [float(v) for v in strategy.experimental_local_results(
            replica_sums(batch["x_z"], batch["s_id"]))]
        steps.append({"replicas": replicas, "sums": sums})
    print(json.dumps({
        "raw": {"x": RAW["x"].tolist(), "n": RAW["n"].tolist(),
                "s": [t.decode() for t in RAW["s"]]},
        "steps": steps,
        "replicas": strategy.num_replicas_in_sync,
        "spec": {k: [s.dtype.name, s.shape.as_list()]
                 for k, s in tf_transform_output.transformed_feature_spec().items()},
        "vocabulary": [t.decode() for t in tf_transform_output.vocabulary_by_name("colour")],
        "buckets": [tf_transform_output.num_buckets_for_transformed_feature("s_id"),
                    tf_transform_output.num_buckets_for_transformed_feature("n_bucket")],
    }))


if __name__ == "__main__":
    main(sys.argv[1])
