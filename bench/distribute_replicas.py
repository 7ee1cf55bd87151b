"""The replica bench (issue 18): `make bench-distribute`, or
`.venv/bin/python bench/distribute_replicas.py [--rounds N] [--batch B] [--step KIND]`.

A compute-bound training step (MLP 512→1024→1024→10, relu, softmax cross-entropy, SGD) under
`em.distribute.MirroredStrategy`: 2 replicas on 2 logical CPUs against 1 replica, each
replica on a per-replica batch of B examples (weak scaling, as data parallelism is used: 2
replicas take a global batch of 2B). A step is `strategy.run` of a replica function, of
two kinds (`--step`): "whole", one em.function doing forward, backward, the all-reduce of
the gradients and the SGD update (each replica its own copies); "eager-apply", the compiled
forward/backward, then an eager `optimizer.apply_gradients` (a merge_call: the gradients
summed, the mirrored weights updated once). The figure is throughput,
examples per second, and the ratio 2 replicas / 1 replica (the issue's target: >= 1.8x).

Each replica computes on one thread (`EMBER_NUM_THREADS=1`, `OPENBLAS_NUM_THREADS=1`, set
here before ember is imported), so 1 replica uses one core and 2 replicas two: the figure
measures the strategy, not the kernels' own threading. The two configurations alternate,
round after round; each round is the median of timed blocks after a warm-up, and the
reported figure the median of the rounds (the machine is shared: medians, not bests).
Before timing, the 2-replica copies of every weight are checked identical. Each round also
shows the cores the process used (CPU time / wall time) and the load average: on a busy
machine (Linux's autogroup scheduling shares the CPUs between sessions, not threads) 2
replicas cannot get 2 cores, and the ratio says so rather than the strategy's scaling; the
control line (numpy matmuls in 2 threads against 1) shows what the machine allows at the time.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import threading
import time

os.environ.setdefault("EMBER_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("EMBER_TIER", "full")  # the strategy's scaling, not a tier swap mid-run

import numpy as np  # noqa: E402 - after the thread settings

import ember as em  # noqa: E402

SIZES = (512, 1024, 1024, 10)
TARGET = 1.8


def build(strategy, batch: int, whole: bool):
    """The model, optimizer and one step function for `strategy` (per-replica `batch`);
    `whole`: the replica step is one em.function (apply_gradients included), else the
    compiled gradients then an eager apply_gradients."""
    n = strategy.num_replicas_in_sync
    with strategy.scope():
        em.random.set_seed(0)
        layers = [em.layers.Dense(SIZES[1], activation="relu"),
                  em.layers.Dense(SIZES[2], activation="relu"), em.layers.Dense(SIZES[3])]
        model = em.layers.Sequential(layers)
        model.build([None, SIZES[0]])
        optimizer = em.optimizers.SGD(0.01)
    weights = model.trainable_variables

    @em.function
    def gradients(features, labels):
        with em.GradientTape() as tape:
            logits = model(features)
            loss = em.reduce_sum(em.nn.sparse_softmax_cross_entropy_with_logits(
                labels=labels, logits=logits)) / (batch * n)
        return loss, tape.gradient(loss, weights)

    def replica_step(features, labels):
        loss, grads = gradients(features, labels)
        optimizer.apply_gradients(zip(grads, weights))
        return loss

    if whole:
        replica_step = em.function(replica_step)

    rng = np.random.default_rng(1)
    inputs = strategy.experimental_distribute_values_from_function(lambda ctx: (
        em.constant(rng.normal(size=(batch, SIZES[0])).astype(np.float32)),
        em.constant(rng.integers(0, SIZES[3], size=batch).astype(np.int32))))

    def step():
        return strategy.run(replica_step, args=inputs)
    return step, weights


def timed(step, seconds: float) -> tuple:
    """(seconds per step: the median of blocks of steps, about `seconds` in all; the cores
    this process used meanwhile: its CPU time / wall time)."""
    step()
    start = time.perf_counter()
    step()
    per = max(time.perf_counter() - start, 1e-4)
    calls = max(1, int(seconds / 7 / per))
    blocks = []
    wall, cpu = time.perf_counter(), time.process_time()
    for _ in range(7):
        start = time.perf_counter()
        for _ in range(calls):
            step()
        blocks.append((time.perf_counter() - start) / calls)
    cores = (time.process_time() - cpu) / (time.perf_counter() - wall)
    return statistics.median(blocks), cores


def measure(one, two, args, whole: bool) -> int:
    """Prints the rounds and the figures of one kind of step; 1 if the copies differ."""
    step1, _ = build(one, args.batch, whole)
    step2, weights2 = build(two, args.batch, whole)
    for _ in range(2):
        step1()
        step2()
    for w in weights2:
        copies = two.experimental_local_results(w)
        if not np.array_equal(copies[0].numpy(), copies[1].numpy()):
            print(f"distribute: the replicas' copies of {w.name} differ after training")
            return 1
    flops = 6 * args.batch * sum(a * b for a, b in zip(SIZES, SIZES[1:]))
    print("step: one em.function (forward, backward, all-reduce, update)" if whole else
          "step: compiled forward/backward, then eager apply_gradients (a merge_call)")
    rates1, rates2 = [], []
    for r in range(args.rounds):
        (t1, c1), (t2, c2) = timed(step1, args.seconds), timed(step2, args.seconds)
        rates1.append(args.batch / t1)
        rates2.append(2 * args.batch / t2)
        print(f"  round {r + 1}: 1 replica {t1 * 1e3:7.2f} ms/step ({c1:.2f} cores)  "
              f"2 replicas {t2 * 1e3:7.2f} ms/step ({c2:.2f} cores)  ratio "
              f"{rates2[-1] / rates1[-1]:.2f}x, load {os.getloadavg()[0]:.1f}", flush=True)
    for label, rates in (("1 replica ", rates1), ("2 replicas", rates2)):
        rate = statistics.median(rates)
        print(f"  {label}: {rate:9.0f} examples/s  {rate * flops / args.batch / 1e9:6.1f} "
              "GFLOP/s")
    ratio = statistics.median(b / a for a, b in zip(rates1, rates2))
    print(f"  throughput 2 replicas / 1 replica: {ratio:.2f}x (median of {args.rounds} rounds;"
          f" target >= {TARGET}x)", flush=True)
    return 0


def control(seconds: float) -> float:
    """What the machine allows now: numpy matmuls (one OpenBLAS thread) in 2 Python threads
    against 1, as a throughput ratio (near 2 on 2 idle cores)."""
    a = np.random.default_rng(2).random((512, 512), dtype=np.float32)

    def rate(threads: int) -> float:
        stop = time.perf_counter() + seconds
        counts = [0] * threads

        def work(k):
            while time.perf_counter() < stop:
                a @ a
                counts[k] += 1
        workers = [threading.Thread(target=work, args=(k,)) for k in range(threads)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        return sum(counts) / seconds
    return rate(2) / rate(1)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--batch", type=int, default=256, help="per-replica batch")
    parser.add_argument("--seconds", type=float, default=2.0, help="per round and strategy")
    parser.add_argument("--step", choices=("whole", "eager-apply", "both"), default="both")
    args = parser.parse_args()
    cpu = em.config.list_physical_devices("CPU")[0]
    em.config.set_logical_device_configuration(cpu, [em.config.LogicalDeviceConfiguration()] * 2)
    one = em.distribute.MirroredStrategy(["cpu:0"])
    two = em.distribute.MirroredStrategy(["cpu:0", "cpu:1"])
    print(f"MirroredStrategy training step, MLP {'-'.join(map(str, SIZES))}, per-replica "
          f"batch {args.batch}, 1 thread per replica, {os.cpu_count()} CPUs, "
          f"load {os.getloadavg()[0]:.1f}")
    print(f"control: numpy matmuls in 2 threads / 1 thread: {control(args.seconds):.2f}x "
          "(what this machine allows now; ~2x on 2 idle cores)", flush=True)
    kinds = {"whole": [True], "eager-apply": [False], "both": [True, False]}[args.step]
    return max(measure(one, two, args, whole) for whole in kinds)


if __name__ == "__main__":
    sys.exit(main())
