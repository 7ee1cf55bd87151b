"""The optimizer base class: learning rate, step counter, slot variables and
`apply_gradients` (keras.optimizers.Optimizer, Keras 3's update order).

Every update is a Variable write (`assign`, `assign_add`, `assign_sub`) of ember ops, so one
`apply_gradients` works eagerly and inside an `em.function`. Slot variables (momenta,
velocities, ...) are Variables created the first time a variable is updated: inside an
em.function that is its first trace, as Keras builds its optimizer on the first
`apply_gradients`; a *second* optimizer used by an already traced function would create
variables on a non-first trace, which raises the guide's ValueError.
"""

from __future__ import annotations

import warnings

import numpy as np

from ember.frontend import ops
from ember.frontend.autodiff import GradientTape
from ember.frontend.math_ops import cast
from ember.frontend.tensor import Tensor, convert_to_tensor
from ember.frontend.training.schedules import LearningRateSchedule
from ember.frontend.user_code import user_stacklevel
from ember.frontend.variables import Variable

# em.distribute's hook (set by ember.runtime.distribute.mirrored): inside a replica of
# strategy.run it all-reduces the gradients and applies them once, in the cross-replica
# context, returning `iterations`; elsewhere it returns None (apply them here).
distributed_apply = None


class Optimizer:
    """The base of `em.optimizers.*`: subclasses define their slots (`_slot_names_for`)
    and `_update_step(gradient, variable, learning_rate)`.

    Args:
      learning_rate: a float (kept in a Variable, so it can be changed between compiled
        calls), an `em.Variable`, a `LearningRateSchedule` evaluated on `iterations`, or a
        callable of no arguments returning the rate.
      weight_decay: if set, each variable first decays by `variable * weight_decay * lr`
        (decoupled weight decay, Keras 3's `_apply_weight_decay`).
      name: the optimizer's name.
    """

    def __init__(self, learning_rate, weight_decay=None, name=None, clipnorm=None,
                 clipvalue=None, global_clipnorm=None):
        self.name = name or type(self).__name__.lower()
        self.clipnorm, self.clipvalue, self.global_clipnorm = _clipping(
            type(self).__name__, clipnorm, clipvalue, global_clipnorm)
        self.iterations = Variable(np.int64(0), trainable=False, name="iteration")
        self._learning_rate = self._learning_rate_var(learning_rate)
        self._owns_learning_rate = self._learning_rate is not learning_rate
        if weight_decay is not None and (not isinstance(weight_decay, (int, float))
                                         or isinstance(weight_decay, bool)
                                         or weight_decay < 0):
            raise ValueError(f"{type(self).__name__}: weight_decay must be a float >= 0 or "
                             f"None, got {weight_decay!r}")
        self.weight_decay = weight_decay
        self._slots: dict = {}  # id(variable) -> {slot name: Variable}
        self._slot_owners: list = []  # the variables with slots, in creation order

    @staticmethod
    def _learning_rate_var(learning_rate):
        if isinstance(learning_rate, (LearningRateSchedule, Variable)):
            return learning_rate
        if isinstance(learning_rate, (int, float, np.floating)) and \
                not isinstance(learning_rate, bool):
            return Variable(np.float32(learning_rate), trainable=False, name="learning_rate")
        if callable(learning_rate):
            return learning_rate
        raise TypeError(f"an optimizer's learning_rate must be a float, an em.Variable, a "
                        f"LearningRateSchedule or a callable; got {learning_rate!r}")

    # -- the learning rate --------------------------------------------------------------------

    @property
    def learning_rate(self):
        """The learning rate: its Variable (as Keras 3's, so `.assign(0.01)` changes it, also
        for compiled steps already traced), or a schedule's value at `iterations`."""
        lr = self._learning_rate
        if isinstance(lr, LearningRateSchedule):
            return convert_to_tensor(lr(self.iterations.read_value()))
        if isinstance(lr, Variable):
            return lr
        return convert_to_tensor(lr())

    @learning_rate.setter
    def learning_rate(self, value):
        if isinstance(self._learning_rate, Variable) and \
                not isinstance(value, (LearningRateSchedule, Variable)) and not callable(value):
            self._learning_rate.assign(value)
        else:
            self._learning_rate = self._learning_rate_var(value)
            self._owns_learning_rate = self._learning_rate is not value

    # -- slots --------------------------------------------------------------------------------

    def add_slot(self, variable: Variable, slot_name: str, initial_value=0.0) -> Variable:
        """The slot `slot_name` of `variable`, created (filled with `initial_value`) if it
        does not exist; inside an em.function only on its first trace."""
        slots = self._slots.setdefault(id(variable), {})
        if slot_name not in slots:
            if not slots:
                self._slot_owners.append(variable)
            dims = variable.shape.as_list()
            if dims is None or None in dims:
                raise ValueError(f"{type(self).__name__}: cannot create the '{slot_name}' "
                                 f"slot of {variable.name}: its shape {variable.shape} is not "
                                 "fully known")
            value = np.full(dims, initial_value, dtype=variable.dtype.np_dtype)
            slots[slot_name] = Variable(value, trainable=False,
                                        name=f"{_base_name(variable)}/{slot_name}")
        return slots[slot_name]

    def get_slot(self, variable: Variable, slot_name: str) -> Variable:
        """The slot `slot_name` of `variable` (KeyError naming the slots it has)."""
        slots = self._slots.get(id(variable), {})
        if slot_name not in slots:
            raise KeyError(f"{variable.name} has no '{slot_name}' slot in {self.name}; it has "
                           f"{sorted(slots) or 'none (not updated yet)'}")
        return slots[slot_name]

    def get_slot_names(self) -> list:
        return [name for name, _ in self._slot_names_for()]

    def _slot_names_for(self) -> tuple:
        """(slot name, initial value) pairs each variable gets; subclasses override."""
        return ()

    def build(self, var_list) -> None:
        """Creates the slots of every variable in `var_list` now (Keras's `build`)."""
        for var in var_list:
            self._check_variable(var)
            for slot_name, init in self._slot_names_for():
                self.add_slot(var, slot_name, init)

    @property
    def variables(self) -> list:
        """`iterations`, the learning rate if the optimizer owns it, then every slot."""
        out = [self.iterations]
        if self._owns_learning_rate:
            out.append(self._learning_rate)
        for var in self._slot_owners:
            out.extend(self._slots[id(var)].values())
        return out

    # -- applying gradients -------------------------------------------------------------------

    def apply_gradients(self, grads_and_vars, name=None):
        """Updates each variable from its gradient, then increments `iterations`; pairs
        whose gradient is None are skipped with a warning naming them (as Keras).

        Args:
          grads_and_vars: (gradient, variable) pairs, e.g. `zip(grads, model.variables)`.

        Returns:
          The `iterations` Variable.

        Raises:
          ValueError: no gradient at all, a gradient whose shape does not match its
            variable's, or (inside an em.function) slots created on a non-first trace.
          TypeError: something other than an em.Variable to update.
        """
        del name
        if distributed_apply is not None:  # em.distribute: inside a replica of strategy.run
            applied = distributed_apply(self, grads_and_vars)
            if applied is not None:
                return applied
        pairs = self._clipped(self._filter(grads_and_vars))
        for _, var in pairs:
            self.build([var])
        lr = self.learning_rate
        if self.weight_decay:
            for _, var in pairs:
                rate = cast(lr, var.dtype)
                var.assign_sub(ops.multiply(var.read_value(),
                                            ops.multiply(rate, float(self.weight_decay))))
        for grad, var in pairs:
            self._update_step(cast(grad, var.dtype), var, cast(lr, var.dtype))
        self.iterations.assign_add(np.int64(1))
        return self.iterations

    def minimize(self, loss, var_list, tape=None):
        """`apply_gradients` of the gradients of `loss` with respect to `var_list` (a list
        or a callable returning one): `loss` is a tensor computed under `tape`, or a callable
        of no arguments, then computed here under a new GradientTape.

        Example:
          >>> w = em.Variable(10.0)
          >>> _ = em.optimizers.RMSprop(0.1).minimize(lambda: w * w / 2.0, [w])
          >>> round(float(w.numpy()), 6)  # Keras's docstring example
          9.683772
        """
        if callable(loss):
            with GradientTape() as tape:
                loss = loss()
        elif tape is None:
            raise ValueError(f"{type(self).__name__}.minimize: `tape` is required when `loss` "
                             "is a tensor (the GradientTape that computed it); or pass a "
                             "callable")
        var_list = list(var_list() if callable(var_list) else var_list)
        grads = tape.gradient(loss, var_list)
        return self.apply_gradients(zip(grads, var_list))

    def _clipped(self, pairs: list) -> list:
        """Keras's gradient clipping: each gradient to `clipvalue` and to norm `clipnorm`,
        or all of them together to global norm `global_clipnorm`."""
        from ember.frontend.math_composites import clip_by_norm, clip_by_value
        from ember.frontend.misc_composites import clip_by_global_norm
        grads = [g for g, _ in pairs]
        if self.clipvalue is not None:
            grads = [clip_by_value(g, -self.clipvalue, self.clipvalue) for g in grads]
        if self.clipnorm is not None:
            grads = [clip_by_norm(g, self.clipnorm) for g in grads]
        if self.global_clipnorm is not None:
            grads, _ = clip_by_global_norm(grads, self.global_clipnorm)
        return [(g, v) for g, (_, v) in zip(grads, pairs)]

    def _filter(self, grads_and_vars) -> list:
        pairs, missing = [], []
        for item in list(grads_and_vars):
            if not isinstance(item, (tuple, list)) or len(item) != 2:
                raise TypeError(f"{type(self).__name__}.apply_gradients takes (gradient, "
                                f"variable) pairs, e.g. zip(grads, vars); got {item!r}")
            grad, var = item
            self._check_variable(var)
            if grad is None:
                missing.append(var.name)
                continue
            grad = convert_to_tensor(grad)
            _check_shapes(grad, var, type(self).__name__)
            pairs.append((grad, var))
        if not pairs:
            raise ValueError(f"{type(self).__name__}.apply_gradients: no gradients provided "
                             f"for any variable (all of {missing} have None)")
        if missing:
            warnings.warn(f"Gradients do not exist for variables {missing} when minimizing "
                          "the loss: they are not updated (is the loss connected to them?)",
                          UserWarning, stacklevel=user_stacklevel())
        return pairs

    def _check_variable(self, var):
        if not isinstance(var, Variable):
            raise TypeError(f"{type(self).__name__} updates em.Variables; got {var!r}")
        if not var.dtype.is_floating:
            raise TypeError(f"{type(self).__name__} cannot update {var.name} of dtype "
                            f"{var.dtype.name}: only floating-point variables are trained")

    def _update_step(self, gradient, variable, learning_rate):
        raise TypeError(f"{type(self).__name__} subclasses Optimizer without defining "
                        "_update_step(gradient, variable, learning_rate)")

    def get_config(self) -> dict:
        return {"name": self.name, "weight_decay": self.weight_decay}


def _base_name(var: Variable) -> str:
    return var.name[:-2] if var.name.endswith(":0") else var.name


def _check_shapes(grad, var: Variable, where: str) -> None:
    g, v = grad.shape.as_list(), var.shape.as_list()
    if g is None or v is None:
        return
    if len(g) != len(v) or any(a is not None and b is not None and a != b
                               for a, b in zip(g, v)):
        raise ValueError(f"{where}.apply_gradients: the gradient of {var.name} has shape "
                         f"{grad.shape}, but the variable has shape {var.shape}")


def _clipping(where: str, clipnorm, clipvalue, global_clipnorm) -> tuple:
    """The clipping options, checked as Keras checks them."""
    if clipnorm is not None and global_clipnorm is not None:
        raise ValueError(f"{where}: only one of clipnorm and global_clipnorm can be set, got "
                         f"clipnorm={clipnorm!r} and global_clipnorm={global_clipnorm!r}")
    for option, value in (("clipnorm", clipnorm), ("clipvalue", clipvalue),
                          ("global_clipnorm", global_clipnorm)):
        if value is not None and (isinstance(value, bool) or
                                  not isinstance(value, (int, float)) or value <= 0):
            raise ValueError(f"{where}: {option} must be a float > 0 or None, got {value!r}")
    return (None if clipnorm is None else float(clipnorm),
            None if clipvalue is None else float(clipvalue),
            None if global_clipnorm is None else float(global_clipnorm))
