"""em.train.Checkpoint: npz round trips of models, optimizer slots and iterations; strict
restoring with errors naming the keys."""

import os

import numpy as np
import pytest

import ember as em


def make_model(hidden=3):
    model = em.Sequential([em.layers.Dense(hidden), em.layers.BatchNormalization(),
                           em.layers.Dense(2)])
    model(np.ones((2, 4), np.float32), training=True)
    return model


def step(model, opt):
    opt.apply_gradients([(em.ones_like(v) * 0.1, v) for v in model.trainable_variables])


def values(vs):
    return [v.numpy().copy() for v in vs]


def test_round_trip_restores_model_slots_and_iterations(tmp_path):
    model, opt = make_model(), em.optimizers.Adam(0.01)
    step(model, opt)
    step(model, opt)
    ckpt = em.train.Checkpoint(model=model, optimizer=opt)
    path = ckpt.save(tmp_path / "ckpt")
    assert path == str(tmp_path / "ckpt-1.npz") and ckpt.save_counter == 1
    with np.load(path, allow_pickle=False) as data:
        keys = set(data.files)
    assert {"model/layers/0/kernel", "model/layers/1/moving_mean", "optimizer/iterations",
            "optimizer/learning_rate", "optimizer/momentum/model/layers/2/bias",
            "optimizer/velocity/model/layers/0/kernel"} <= keys
    assert not any(k.startswith("optimizer/momentum/model/layers/1/moving") for k in keys)

    fresh_model, fresh_opt = make_model(), em.optimizers.Adam(0.01)
    em.train.Checkpoint(model=fresh_model, optimizer=fresh_opt).restore(path)
    for a, b in zip(values(model.variables + tuple(opt.variables)),
                    values(fresh_model.variables + tuple(fresh_opt.variables))):
        np.testing.assert_array_equal(a, b)
    assert int(fresh_opt.iterations.numpy()) == 2
    # training continues identically from the restored state
    step(model, opt)
    step(fresh_model, fresh_opt)
    for a, b in zip(values(model.variables), values(fresh_model.variables)):
        np.testing.assert_array_equal(a, b)


def test_write_and_read_use_the_exact_path(tmp_path):
    v = em.Variable([1.0, 2.0])
    ckpt = em.train.Checkpoint(v=v, nested={"b": [em.Variable(3)]})
    path = ckpt.write(os.path.join(tmp_path, "sub", "weights.npz"))
    assert path.endswith("sub/weights.npz") and ckpt.save_counter == 0
    v.assign([0.0, 0.0])
    ckpt.read(path)
    np.testing.assert_array_equal(v.numpy(), [1.0, 2.0])
    with np.load(path) as data:
        assert sorted(data.files) == ["nested/b/0", "v"]


def test_restore_after_compiled_training(tmp_path):
    model, opt = make_model(), em.optimizers.SGD(0.1, momentum=0.9)
    em.function(lambda: step(model, opt))()
    path = em.train.Checkpoint(model=model, optimizer=opt).write(tmp_path / "c")
    fresh_model, fresh_opt = make_model(), em.optimizers.SGD(0.1, momentum=0.9)
    em.train.Checkpoint(model=fresh_model, optimizer=fresh_opt).read(path)
    np.testing.assert_array_equal(
        fresh_opt.get_slot(fresh_model.layers[0].kernel, "momentum").numpy(),
        opt.get_slot(model.layers[0].kernel, "momentum").numpy())


def test_missing_and_extra_keys_are_named_and_nothing_is_assigned(tmp_path):
    a, b = em.Variable(1.0), em.Variable(2.0)
    path = em.train.Checkpoint(a=a, b=b).write(tmp_path / "ab")
    c = em.Variable(5.0)
    with pytest.raises(ValueError, match=r"missing from the file: \['c'\]"):
        em.train.Checkpoint(a=a, c=c).read(path)
    a.assign(7.0)
    model_path = em.train.Checkpoint(model=make_model()).write(tmp_path / "m")
    smaller = em.Sequential([em.layers.Dense(3)])
    smaller(np.ones((2, 4), np.float32))  # the file holds layers it lacks: nothing written
    with pytest.raises(ValueError, match="in the file but not in the checkpoint"):
        em.train.Checkpoint(model=smaller, a=a).read(model_path)
    assert a.numpy() == 7.0


def test_values_of_objects_not_given_are_left_for_expect_partial(tmp_path):
    """A model restored alone from a training checkpoint (TensorFlow's
    `Checkpoint(model=m).restore(path).expect_partial()`): the optimizer's values stay in
    the file, and assert_consumed names them."""
    model, opt = make_model(), em.optimizers.Adam(0.1)
    opt.apply_gradients(zip([em.ones_like(v) for v in model.trainable_variables],
                            model.trainable_variables))
    path = em.train.Checkpoint(model=model, optimizer=opt).save(tmp_path / "train")
    fresh = make_model()
    status = em.train.Checkpoint(model=fresh).restore(path)
    assert status.expect_partial() is status
    for got, want in zip(fresh.variables, model.variables):
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    with pytest.raises(AssertionError, match=r"not given, left unrestored: \['optimizer/"):
        status.assert_consumed()


def test_shape_and_dtype_mismatches_name_the_key(tmp_path):
    path = em.train.Checkpoint(model=make_model(3)).write(tmp_path / "m")
    with pytest.raises(ValueError, match=r"model/layers/0/kernel in .* has shape \[4, 3\]"):
        em.train.Checkpoint(model=make_model(5)).read(path)
    path = em.train.Checkpoint(v=em.Variable(1.0)).write(tmp_path / "v")
    with pytest.raises(ValueError, match="has dtype float32, but .* has dtype float64"):
        em.train.Checkpoint(v=em.Variable(np.float64(1.0))).read(path)


def test_errors_for_untracked_slots_bad_objects_and_missing_files(tmp_path):
    w, opt = em.Variable(1.0), em.optimizers.SGD(0.1, momentum=0.5)
    opt.apply_gradients([(em.constant(1.0), w)])
    with pytest.raises(ValueError, match="no other object of this checkpoint holds"):
        em.train.Checkpoint(optimizer=opt).write(tmp_path / "o")
    with pytest.raises(TypeError, match="cannot save thing='text'"):
        em.train.Checkpoint(thing="text").write(tmp_path / "t")
    with pytest.raises(FileNotFoundError, match="no checkpoint"):
        em.train.Checkpoint(w=w).read(tmp_path / "absent")
    with pytest.raises(ValueError, match="contains '/'"):
        em.train.Checkpoint(**{"a/b": w})


def test_checkpoint_manager_numbers_keeps_and_finds_checkpoints(tmp_path):
    v = em.Variable(0.0)
    manager = em.train.CheckpointManager(em.train.Checkpoint(v=v), tmp_path, max_to_keep=2)
    assert manager.latest_checkpoint is None and em.train.latest_checkpoint(tmp_path) is None
    for i in range(3):
        v.assign(float(i))
        manager.save()
    assert [os.path.basename(p) for p in manager.checkpoints] == ["ckpt-2.npz", "ckpt-3.npz"]
    assert em.train.latest_checkpoint(tmp_path) == manager.latest_checkpoint
    # a new manager over the same directory continues the numbering
    again = em.train.CheckpointManager(em.train.Checkpoint(v=v), tmp_path, max_to_keep=2)
    assert os.path.basename(again.save()) == "ckpt-4.npz"
    em.train.Checkpoint(v=v).restore(manager.checkpoints[0])
    assert v.numpy() == 2.0
    with pytest.raises(ValueError, match="max_to_keep"):
        em.train.CheckpointManager(em.train.Checkpoint(v=v), tmp_path, max_to_keep=0)


def test_restore_returns_a_status_and_restore_or_initialize(tmp_path):
    v = em.Variable(3.0)
    manager = em.train.CheckpointManager(em.train.Checkpoint(v=v), tmp_path / "run")
    assert manager.restore_or_initialize() is None and v.numpy() == 3.0  # nothing yet
    path = manager.save()
    v.assign(0.0)
    assert manager.restore_or_initialize() == path and v.numpy() == 3.0
    status = em.train.Checkpoint(v=v).restore(path)
    assert status.expect_partial() is status and status.assert_consumed() is status
    assert status.assert_existing_objects_matched().assert_nontrivial_match() is status
    empty = em.train.Checkpoint().write(tmp_path / "empty")
    with pytest.raises(AssertionError, match="matched no value"):
        em.train.Checkpoint().restore(empty).assert_nontrivial_match()


def test_restoring_into_an_unbuilt_model_says_to_build_it(tmp_path):
    path = em.train.Checkpoint(model=make_model(3)).write(tmp_path / "m")
    unbuilt = em.layers.Sequential([em.layers.Dense(3)])
    with pytest.raises(ValueError, match=r"exist once it is built: call it once, or "
                                         r"model.build\(input_shape\)"):
        em.train.Checkpoint(model=unbuilt).restore(path)


@pytest.mark.parametrize("dtype", [np.float16, np.float64, np.int64, np.bool_,
                                   em.bfloat16.np_dtype])
def test_every_dtype_round_trips(tmp_path, dtype):
    value = np.array([[1.5, 0.0], [-2.0, 3.0]]).astype(dtype)
    v = em.Variable(value)
    path = em.train.Checkpoint(v=v).write(tmp_path / "d")
    v.assign(np.zeros_like(value))
    em.train.Checkpoint(v=v).read(path)
    assert v.dtype == em.as_dtype(dtype)
    np.testing.assert_array_equal(v.numpy().astype(np.float64), value.astype(np.float64))


def test_objects_are_attributes_and_attributes_set_later_are_saved(tmp_path):
    ckpt = em.train.Checkpoint(step=em.Variable(1))
    ckpt.step.assign_add(1)  # the guide's `ckpt.step.assign_add(1)`
    ckpt.extra = em.Variable([1.0, 2.0])
    path = ckpt.save(str(tmp_path / "ckpt"))
    ckpt.step.assign(10)
    ckpt.extra.assign([0.0, 0.0])
    ckpt.restore(path).assert_consumed()
    assert int(ckpt.step.numpy()) == 2 and ckpt.extra.numpy().tolist() == [1.0, 2.0]
    with pytest.raises(AttributeError, match=r"no object 'stpe'; it was given \['extra', "):
        ckpt.stpe
