"""The bases of Ember's errors and warnings, in the lowest layer so that every layer's errors
derive from them; `em.errors` (ember/errors.py) exports each public one.
"""


class EmberError(Exception):
    """Base of Ember's own error classes (all are in `em.errors`); each also derives from
    the Python error it is a kind of (ValueError, TypeError, ...). A bad argument to the API
    raises Python's ValueError or TypeError itself, as TensorFlow's does."""


class EmberWarning(UserWarning):
    """Base of Ember's warnings (`em.errors`)."""
