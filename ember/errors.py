"""`em.errors`: the exceptions Ember raises, as TensorFlow's `tf.errors`.

`OpError` is the base of every error an op raises, eagerly, traced or from compiled code
(`InvalidArgumentError` for bad values at run time, as in TensorFlow; `OpTypeError`,
`OpShapeError` and `OpAttributeError` for operands and attributes an op does not accept).
The others are raised by the tracer and the runtime.

Example:
  >>> import ember as em
  >>> try:
  ...     em.constant([1, 2]) // em.constant([1, 0])
  ... except em.errors.InvalidArgumentError as e:
  ...     print(type(e).__name__, isinstance(e, em.errors.OpError))
  InvalidArgumentError True
"""

from ember.dialects.ember.base import (InvalidArgumentError, OpAttributeError, OpError,
                                       OpShapeError, OpTypeError)
from ember.frontend.control_flow import ControlFlowError
from ember.frontend.tracing import OutOfScopeError
from ember.runtime.executor import InterpreterFallbackError
from ember.runtime.input_signature import InputSignatureError

__all__ = ["ControlFlowError", "InputSignatureError", "InterpreterFallbackError",
           "InvalidArgumentError", "OpAttributeError", "OpError", "OpShapeError",
           "OpTypeError", "OutOfScopeError"]
