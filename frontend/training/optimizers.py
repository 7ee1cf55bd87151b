"""`em.optimizers`: SGD, Adam, AdamW, RMSprop and Adagrad with Keras 3's update formulas
(keras/src/optimizers/*.py), written as Variable writes of ember ops.

Each `_update_step(g, w, lr)` receives the gradient and the learning rate already cast to
the variable's dtype; `apply_gradients` (in `optimizer_base`) creates the slots, applies
weight decay and increments `iterations` after the updates.
"""

from __future__ import annotations

from ember.frontend import ops
from ember.frontend.math_ops import cast
from ember.frontend.tensor import convert_to_tensor
from ember.frontend.training.optimizer_base import Optimizer


def _fraction(value, what: str, where: str, upper_open: bool = False) -> float:
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not (
            0 <= value < 1 if upper_open else 0 <= value <= 1):
        interval = "[0, 1)" if upper_open else "[0, 1]"
        raise ValueError(f"{where}: `{what}` must be a float in {interval}, got {value!r}")
    return float(value)


def _non_negative(value, what: str, where: str) -> float:
    if not isinstance(value, (int, float)) or isinstance(value, bool) or value < 0:
        raise ValueError(f"{where}: `{what}` must be a float >= 0, got {value!r}")
    return float(value)


class SGD(Optimizer):
    """Gradient descent, with momentum and Nesterov momentum (keras.optimizers.SGD).

    `w -= lr * g`; with momentum, `v = momentum * v - lr * g` then `w += v`, or with
    `nesterov`, `w += momentum * v - lr * g`.

    Example:
      >>> w = em.Variable([1.0, 2.0])
      >>> opt = em.optimizers.SGD(learning_rate=0.1)
      >>> _ = opt.apply_gradients([(em.constant([1.0, -1.0]), w)])
      >>> w.numpy()
      array([0.9, 2.1], dtype=float32)
    """

    def __init__(self, learning_rate=0.01, momentum=0.0, nesterov=False, weight_decay=None,
                 name="SGD", **clipping):
        super().__init__(learning_rate, weight_decay, name, **clipping)
        self.momentum = _fraction(momentum, "momentum", "SGD")
        self.nesterov = bool(nesterov)

    def _slot_names_for(self):
        return (("momentum", 0.0),) if self.momentum else ()

    def _update_step(self, g, w, lr):
        step = ops.multiply(g, lr)
        if not self.momentum:
            w.assign_sub(step)
            return
        m = self.get_slot(w, "momentum")
        m.assign(ops.subtract(ops.multiply(m.read_value(), self.momentum), step))
        if self.nesterov:
            w.assign_add(ops.subtract(ops.multiply(m.read_value(), self.momentum), step))
        else:
            w.assign_add(m.read_value())

    def get_config(self):
        return {**super().get_config(), "momentum": self.momentum, "nesterov": self.nesterov}


class Adam(Optimizer):
    """Adam (keras.optimizers.Adam): with t = iterations + 1,
    `m += (g - m) * (1 - beta_1)`, `v += (g**2 - v) * (1 - beta_2)`,
    `w -= lr * sqrt(1 - beta_2**t) / (1 - beta_1**t) * m / (sqrt(v) + epsilon)`;
    `amsgrad` uses the running maximum of v. The arithmetic is in the variable's dtype, as
    Keras's: in bfloat16, 1 - 0.999 ** t rounds to 0 and the steps vanish (keep trained
    variables in float32, as mixed precision does).

    Example:
      >>> w = em.Variable(1.0)
      >>> _ = em.optimizers.Adam(learning_rate=0.1).apply_gradients([(em.constant(2.0), w)])
      >>> round(float(w.numpy()), 4)  # the first Adam step moves by about lr
      0.9
    """

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7,
                 amsgrad=False, weight_decay=None, name="adam", **clipping):
        super().__init__(learning_rate, weight_decay, name, **clipping)
        where = type(self).__name__
        self.beta_1 = _fraction(beta_1, "beta_1", where, upper_open=True)
        self.beta_2 = _fraction(beta_2, "beta_2", where, upper_open=True)
        self.epsilon = _non_negative(epsilon, "epsilon", where)
        self.amsgrad = bool(amsgrad)

    def _slot_names_for(self):
        names = (("momentum", 0.0), ("velocity", 0.0))
        return names + ((("velocity_hat", 0.0),) if self.amsgrad else ())

    def _update_step(self, g, w, lr):
        t = cast(ops.add(self.iterations.read_value(), 1), w.dtype)
        # the betas straight in the variable's dtype (a float32 detour would round them)
        beta_1_power = ops.pow(convert_to_tensor(self.beta_1, dtype=w.dtype), t)
        beta_2_power = ops.pow(convert_to_tensor(self.beta_2, dtype=w.dtype), t)
        alpha = ops.divide(ops.multiply(lr, ops.sqrt(ops.subtract(1.0, beta_2_power))),
                           ops.subtract(1.0, beta_1_power))
        m, v = self.get_slot(w, "momentum"), self.get_slot(w, "velocity")
        m.assign_add(ops.multiply(ops.subtract(g, m.read_value()), 1.0 - self.beta_1))
        v.assign_add(ops.multiply(ops.subtract(ops.square(g), v.read_value()),
                                  1.0 - self.beta_2))
        v_now = v.read_value()
        if self.amsgrad:
            v_hat = self.get_slot(w, "velocity_hat")
            v_hat.assign(ops.maximum(v_hat.read_value(), v_now))
            v_now = v_hat.read_value()
        w.assign_sub(ops.divide(ops.multiply(m.read_value(), alpha),
                                ops.add(ops.sqrt(v_now), self.epsilon)))

    def get_config(self):
        return {**super().get_config(), "beta_1": self.beta_1, "beta_2": self.beta_2,
                "epsilon": self.epsilon, "amsgrad": self.amsgrad}


class AdamW(Adam):
    """Adam with decoupled weight decay (keras.optimizers.AdamW): before each Adam step,
    `w -= w * weight_decay * lr`.

    Example:
      >>> w = em.Variable(1.0)
      >>> opt = em.optimizers.AdamW(learning_rate=0.1, weight_decay=0.5)
      >>> _ = opt.apply_gradients([(em.constant(0.0), w)])  # only the decay moves w
      >>> round(float(w.numpy()), 4)
      0.95
    """

    def __init__(self, learning_rate=0.001, weight_decay=0.004, beta_1=0.9, beta_2=0.999,
                 epsilon=1e-7, amsgrad=False, name="adamw", **clipping):
        if weight_decay is None:
            raise ValueError("AdamW: weight_decay must be a float >= 0 (use em.optimizers."
                             "Adam for no decay), got None")
        super().__init__(learning_rate, beta_1, beta_2, epsilon, amsgrad, weight_decay, name,
                         **clipping)


class RMSprop(Optimizer):
    """RMSprop (keras.optimizers.RMSprop): `v = rho * v + (1 - rho) * g**2`,
    `inc = lr * g / sqrt(v + epsilon)` (centered: `sqrt(v - a**2 + epsilon)` with
    `a = rho * a + (1 - rho) * g`); with momentum, `m = momentum * m + inc`, `w -= m`,
    else `w -= inc`.

    Example:
      >>> w = em.Variable(10.0)
      >>> _ = em.optimizers.RMSprop(0.1).apply_gradients([(em.constant(10.0), w)])
      >>> round(float(w.numpy()), 6)  # Keras's docstring example: 9.683772
      9.683772
    """

    def __init__(self, learning_rate=0.001, rho=0.9, momentum=0.0, epsilon=1e-7,
                 centered=False, weight_decay=None, name="rmsprop", **clipping):
        super().__init__(learning_rate, weight_decay, name, **clipping)
        self.rho = _fraction(rho, "rho", "RMSprop")
        self.momentum = _fraction(momentum, "momentum", "RMSprop")
        self.epsilon = _non_negative(epsilon, "epsilon", "RMSprop")
        self.centered = bool(centered)

    def _slot_names_for(self):
        names = (("velocity", 0.0),)
        if self.momentum > 0:
            names += (("momentum", 0.0),)
        if self.centered:
            names += (("average_gradient", 0.0),)
        return names

    def _update_step(self, g, w, lr):
        rho = self.rho
        velocity = self.get_slot(w, "velocity")
        velocity.assign(ops.add(ops.multiply(velocity.read_value(), rho),
                                ops.multiply(ops.square(g), 1.0 - rho)))
        denominator = velocity.read_value()
        if self.centered:
            average = self.get_slot(w, "average_gradient")
            average.assign(ops.add(ops.multiply(average.read_value(), rho),
                                   ops.multiply(g, 1.0 - rho)))
            denominator = ops.subtract(denominator, ops.square(average.read_value()))
        increment = ops.divide(ops.multiply(lr, g),
                               ops.sqrt(ops.add(denominator, self.epsilon)))
        if self.momentum > 0:
            momentum = self.get_slot(w, "momentum")
            momentum.assign(ops.add(ops.multiply(momentum.read_value(), self.momentum),
                                    increment))
            w.assign_sub(momentum.read_value())
        else:
            w.assign_sub(increment)

    def get_config(self):
        return {**super().get_config(), "rho": self.rho, "momentum": self.momentum,
                "epsilon": self.epsilon, "centered": self.centered}


class Adagrad(Optimizer):
    """Adagrad (keras.optimizers.Adagrad): `acc += g**2`, `w -= lr * g / sqrt(acc +
    epsilon)`, with `acc` starting at `initial_accumulator_value`.

    Example:
      >>> w = em.Variable(1.0)
      >>> _ = em.optimizers.Adagrad(0.1).apply_gradients([(em.constant(0.3), w)])
      >>> round(float(w.numpy()), 6)  # 1 - 0.1 * 0.3 / sqrt(0.1 + 0.09 + 1e-7)
      0.931175
    """

    def __init__(self, learning_rate=0.001, initial_accumulator_value=0.1, epsilon=1e-7,
                 weight_decay=None, name="adagrad", **clipping):
        super().__init__(learning_rate, weight_decay, name, **clipping)
        self.initial_accumulator_value = _non_negative(
            initial_accumulator_value, "initial_accumulator_value", "Adagrad")
        self.epsilon = _non_negative(epsilon, "epsilon", "Adagrad")

    def _slot_names_for(self):
        return (("accumulator", self.initial_accumulator_value),)

    def _update_step(self, g, w, lr):
        acc = self.get_slot(w, "accumulator")
        acc.assign_add(ops.square(g))
        w.assign_sub(ops.divide(ops.multiply(lr, g),
                                ops.sqrt(ops.add(acc.read_value(), self.epsilon))))

    def get_config(self):
        return {**super().get_config(),
                "initial_accumulator_value": self.initial_accumulator_value,
                "epsilon": self.epsilon}


__all__ = ["Adagrad", "Adam", "AdamW", "Optimizer", "RMSprop", "SGD"]
