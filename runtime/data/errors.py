"""The errors `em.data`'s file readers raise, as TensorFlow's `tf.errors` (op errors), and
the messages of mistakes in building a dataset."""

from ember.dialects.ember.base import OpError


class DataLossError(OpError):
    """A record file is damaged: a checksum does not match or a record is cut short
    (TensorFlow's `tf.errors.DataLossError`). The message names the file and the offset."""


class NotFoundError(OpError):
    """A file a dataset reads does not exist (TensorFlow's `tf.errors.NotFoundError`)."""


for _error in (DataLossError, NotFoundError):
    _error.__module__ = "ember.errors"


def symbolic_argument(what: str, value) -> TypeError:
    """The error for a symbolic tensor (one traced inside `em.function`) given where a dataset
    needs a value now (`Dataset.range(n)`, `batch(n)`, ...)."""
    return TypeError(f"{what}: got the symbolic tensor {value.name}, traced inside "
                     "em.function: a dataset is built from Python values or eager tensors, "
                     "when it is created. Build the dataset outside the function and pass it "
                     "in as an argument, or use Python numbers.")


def missing_attribute(dataset, name: str):
    """`Dataset.__getattr__`: every dataset class says 'Dataset' (not its node's class
    name), and names the closest public method for a typo."""
    if not name.startswith("_") and hasattr(type(dataset), name):
        # a property's own AttributeError (Python calls __getattr__ after it): re-raise it
        return object.__getattribute__(dataset, name)
    message = f"'Dataset' object has no attribute '{name}'"
    if not name.startswith("_"):
        import difflib
        public = [n for n in dir(type(dataset)) if not n.startswith("_")]
        close = difflib.get_close_matches(name, public, n=1)
        if close:
            message += f"; did you mean '{close[0]}'?"
    raise AttributeError(message, name=name, obj=dataset)
