"""`em.is_tensor` (tf.is_tensor): whether Ember's ops take a value as it is, without
converting it first.

That is an `em.Tensor`, eager or symbolic (inside `em.function`); a value that reads as one,
as an `em.Variable` does (it has `_as_tensor`, as the distributed variables have too); or an
object whose `is_tensor_like` attribute is true (TensorFlow's opt-in for other classes).
numpy arrays, Python numbers and lists are not: ops convert them to constants.
"""

from __future__ import annotations

from ember.frontend.tensor import Tensor


def is_tensor(x) -> bool:
    """Whether `x` is an Ember tensor or reads as one (tf.is_tensor).

    True for `em.Tensor`s (eager ones and those a traced function computes) and for
    `em.Variable`s, as in TensorFlow; False for numpy arrays, Python scalars and lists,
    which ops convert to tensors first. The answer depends only on the type, so it is the
    same eagerly and inside `em.function`.

    Example:
      >>> import ember as em, numpy as np
      >>> em.is_tensor(em.constant([1.0])), em.is_tensor(em.Variable(1.0))
      (True, True)
      >>> em.is_tensor(np.ones(2)), em.is_tensor(3.0)
      (False, False)
    """
    if isinstance(x, Tensor):
        return True
    # (AutoGraph's stand-in for an unassigned name raises here, as reading it would.)
    if getattr(x, "is_tensor_like", False):
        return True
    return callable(getattr(type(x), "_as_tensor", None))
