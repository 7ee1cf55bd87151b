"""`.device` of variables, as TF's: an em.Variable names the device it was created under
(the CPU, or GPU:N inside `with em.device("gpu:N")`), each copy of a MirroredVariable
(`experimental_local_results`) its replica's device, and the MirroredVariable the copy of
the replica reading it (the first copy's in the cross-replica context)."""

import subprocess
import sys
import textwrap

import pytest

import ember as em
from ember.backends.cuda.emulated_device import emulate_gpus

CPU = "/job:localhost/replica:0/task:0/device:CPU:{}"
GPU = "/job:localhost/replica:0/task:0/device:GPU:{}"


@pytest.fixture
def two_gpus():
    previous = emulate_gpus(2)
    yield
    emulate_gpus(previous)


def test_a_variable_names_the_cpu_by_default():
    v = em.Variable([1.0, 2.0])
    assert v.device == CPU.format(0)
    with em.device("cpu:0"):
        assert em.Variable(3.0).device == CPU.format(0)


def test_a_variable_made_inside_a_gpu_scope_names_that_gpu(two_gpus):
    with em.device("gpu:1"):
        v = em.Variable([1.0, 2.0])
    assert v.device == GPU.format(1)
    v.assign([3.0, 4.0])  # an eager write leaves the variable's device as it was
    assert v.device == GPU.format(1)
    assert em.Variable(0.0).device == CPU.format(0)  # the scope is over


def test_mirrored_copies_name_their_replica_gpus(two_gpus):
    strategy = em.distribute.MirroredStrategy()
    with strategy.scope():
        v = em.Variable([1.0, 2.0])
    copies = strategy.experimental_local_results(v)
    assert [c.device for c in copies] == [GPU.format(0), GPU.format(1)]
    assert v.device == GPU.format(0)  # cross-replica: the first copy's
    seen = {}

    def replica():
        seen[int(em.distribute.get_replica_context().replica_id_in_sync_group)] = v.device
        return em.constant(0.0)
    strategy.run(replica)
    assert seen == {0: GPU.format(0), 1: GPU.format(1)}


def test_mirrored_copies_name_their_logical_cpus():
    code = """
        import ember as em
        cpu = em.config.list_physical_devices("CPU")[0]
        em.config.set_logical_device_configuration(
            cpu, [em.config.LogicalDeviceConfiguration()] * 2)
        strategy = em.distribute.MirroredStrategy()
        with strategy.scope():
            v = em.Variable([1.0, 2.0])
        print([c.device for c in strategy.experimental_local_results(v)])
        print(v.device)
    """
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:2] == [str([CPU.format(0), CPU.format(1)]), CPU.format(0)]
