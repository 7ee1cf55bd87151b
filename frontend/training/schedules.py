"""`em.optimizers.schedules`: learning rates as functions of the optimizer step
(keras.optimizers.schedules).

A schedule is called with the optimizer's `iterations` (an int64 tensor, symbolic inside an
em.function) and returns a float32 scalar tensor built from ember ops, so a compiled training
step evaluates it on every call: the formulas are Keras 3's, written with `em.where` instead
of Python branches.
"""

from __future__ import annotations

import math

from ember.dialects.ember import dtypes
from ember.frontend import ops
from ember.frontend.math_ops import cast
from ember.frontend.tensor import convert_to_tensor


def _step(step):
    return cast(convert_to_tensor(step), dtypes.float32)


def _positive(value, what: str, where: str):
    if not isinstance(value, (int, float)) or isinstance(value, bool) or value <= 0:
        raise ValueError(f"{where}: `{what}` must be a number > 0, got {value!r}")


class LearningRateSchedule:
    """The base class of learning-rate schedules: subclasses define `__call__(step)`, which
    takes the optimizer's step (an int64 scalar tensor) and returns the learning rate."""

    def __call__(self, step):
        raise TypeError(f"{type(self).__name__} subclasses LearningRateSchedule without "
                        "defining __call__(self, step): define it to return the rate")

    def get_config(self) -> dict:
        """The constructor arguments, as Keras's `get_config`."""
        return {k: v for k, v in vars(self).items() if not k.startswith("_")}

    @classmethod
    def from_config(cls, config: dict):
        return cls(**config)


class _RateDecay(LearningRateSchedule):
    """What ExponentialDecay and InverseTimeDecay share: their arguments, and the step's
    progress step / decay_steps (floored with `staircase`)."""

    def __init__(self, initial_learning_rate, decay_steps, decay_rate, staircase=False,
                 name=None):
        _positive(decay_steps, "decay_steps", type(self).__name__)
        self.initial_learning_rate = initial_learning_rate
        self.decay_steps = decay_steps
        self.decay_rate = decay_rate
        self.staircase = staircase
        self.name = name or type(self).__name__

    def _progress(self, step):
        p = ops.divide(_step(step), float(self.decay_steps))
        return ops.floor(p) if self.staircase else p


class ExponentialDecay(_RateDecay):
    """`initial_learning_rate * decay_rate ** (step / decay_steps)`; with `staircase` the
    exponent is floored (keras.optimizers.schedules.ExponentialDecay).

    Example:
      >>> s = em.optimizers.schedules.ExponentialDecay(0.1, decay_steps=10, decay_rate=0.5)
      >>> round(float(s(20)), 6)
      0.025
    """

    def __call__(self, step):
        rate = convert_to_tensor(float(self.decay_rate), dtype=dtypes.float32)
        return ops.multiply(float(self.initial_learning_rate),
                            ops.pow(rate, self._progress(step)))


class PiecewiseConstantDecay(LearningRateSchedule):
    """`values[0]` while `step <= boundaries[0]`, `values[i]` while
    `boundaries[i-1] < step <= boundaries[i]`, `values[-1]` after the last boundary
    (keras.optimizers.schedules.PiecewiseConstantDecay).

    Example:
      >>> s = em.optimizers.schedules.PiecewiseConstantDecay([10, 20], [1.0, 0.5, 0.1])
      >>> [float(s(k)) for k in (10, 11, 20, 21)]
      [1.0, 0.5, 0.5, 0.10000000149011612]
    """

    def __init__(self, boundaries, values, name="PiecewiseConstant"):
        boundaries, values = list(boundaries), list(values)
        if len(boundaries) != len(values) - 1:
            raise ValueError(
                "PiecewiseConstantDecay: the length of boundaries should be 1 less than the "
                f"length of values; got boundaries={boundaries} of length {len(boundaries)} "
                f"and values={values} of length {len(values)}")
        if any(b >= c for b, c in zip(boundaries, boundaries[1:])):
            raise ValueError(f"PiecewiseConstantDecay: boundaries must increase strictly, got "
                             f"{boundaries}")
        self.boundaries = boundaries
        self.values = values
        self.name = name

    def __call__(self, step):
        step = _step(step)
        result = convert_to_tensor(float(self.values[-1]), dtype=dtypes.float32)
        # from the last interval back to the first, so the earliest matching one wins
        for bound, value in zip(reversed(self.boundaries), reversed(self.values[:-1])):
            result = ops.where(ops.less_equal(step, float(bound)),
                               convert_to_tensor(float(value), dtype=dtypes.float32), result)
        return result


class CosineDecay(LearningRateSchedule):
    """A cosine decay from the initial rate (or `warmup_target` after a linear warm-up of
    `warmup_steps`) to `alpha` times it over `decay_steps`, constant afterwards
    (keras.optimizers.schedules.CosineDecay).

    Example:
      >>> s = em.optimizers.schedules.CosineDecay(1.0, decay_steps=10)
      >>> [round(float(s(k)), 4) for k in (0, 5, 10, 15)]
      [1.0, 0.5, 0.0, 0.0]
    """

    def __init__(self, initial_learning_rate, decay_steps, alpha=0.0, name="CosineDecay",
                 warmup_target=None, warmup_steps=0):
        _positive(decay_steps, "decay_steps", "CosineDecay")
        if warmup_target is not None:
            _positive(warmup_steps, "warmup_steps", "CosineDecay (with a warmup_target)")
        self.initial_learning_rate = initial_learning_rate
        self.decay_steps = decay_steps
        self.alpha = alpha
        self.name = name
        self.warmup_target = warmup_target
        self.warmup_steps = warmup_steps

    def _decay(self, step, start: float):
        fraction = ops.divide(step, float(self.decay_steps))
        cosine = ops.multiply(0.5, ops.add(1.0, ops.cos(ops.multiply(math.pi, fraction))))
        decayed = ops.add(ops.multiply(1.0 - self.alpha, cosine), float(self.alpha))
        return ops.multiply(start, decayed)

    def __call__(self, step):
        step = _step(step)
        initial = float(self.initial_learning_rate)
        if self.warmup_target is None:
            return self._decay(ops.minimum(step, float(self.decay_steps)), initial)
        warm = float(self.warmup_steps)
        step = ops.minimum(step, float(self.decay_steps) + warm)
        target = float(self.warmup_target)
        warmup = ops.add(ops.multiply(ops.divide(step, warm), target - initial), initial)
        decay = self._decay(ops.subtract(step, warm), target)
        return ops.where(ops.less(step, warm), warmup, decay)


class InverseTimeDecay(_RateDecay):
    """`initial_learning_rate / (1 + decay_rate * step / decay_steps)`; with `staircase` the
    quotient step / decay_steps is floored (keras.optimizers.schedules.InverseTimeDecay).

    Example:
      >>> s = em.optimizers.schedules.InverseTimeDecay(0.1, decay_steps=1.0, decay_rate=0.5)
      >>> [round(float(s(k)), 6) for k in (0, 2, 6)]
      [0.1, 0.05, 0.025]
    """

    def __call__(self, step):
        denominator = ops.add(1.0, ops.multiply(float(self.decay_rate), self._progress(step)))
        return ops.divide(float(self.initial_learning_rate), denominator)


class PolynomialDecay(LearningRateSchedule):
    """A polynomial decay of power `power` from the initial rate to `end_learning_rate`
    over `decay_steps`, constant afterwards; with `cycle`, decay_steps grows to the first
    multiple of it past the step, so the rate decays again from a lower start
    (keras.optimizers.schedules.PolynomialDecay).

    Example:
      >>> s = em.optimizers.schedules.PolynomialDecay(1.0, decay_steps=10,
      ...                                            end_learning_rate=0.0)
      >>> [round(float(s(k)), 4) for k in (0, 5, 10, 20)]
      [1.0, 0.5, 0.0, 0.0]
    """

    def __init__(self, initial_learning_rate, decay_steps, end_learning_rate=0.0001,
                 power=1.0, cycle=False, name="PolynomialDecay"):
        _positive(decay_steps, "decay_steps", "PolynomialDecay")
        self.initial_learning_rate = initial_learning_rate
        self.decay_steps = decay_steps
        self.end_learning_rate = end_learning_rate
        self.power = power
        self.cycle = cycle
        self.name = name

    def __call__(self, step):
        step = _step(step)
        steps = convert_to_tensor(float(self.decay_steps), dtype=dtypes.float32)
        if self.cycle:  # (step 0: one period)
            periods = ops.where(ops.equal(step, 0.0), ops.ones_like(step),
                                ops.ceil(ops.divide(step, steps)))
            steps = ops.multiply(steps, periods)
        else:
            step = ops.minimum(step, steps)
        remaining = ops.subtract(1.0, ops.divide(step, steps))
        power = convert_to_tensor(float(self.power), dtype=dtypes.float32)
        end = float(self.end_learning_rate)
        span = float(self.initial_learning_rate) - end
        return ops.add(ops.multiply(span, ops.pow(remaining, power)), end)


__all__ = ["CosineDecay", "ExponentialDecay", "InverseTimeDecay", "LearningRateSchedule",
           "PiecewiseConstantDecay", "PolynomialDecay"]
