"""`em.errors`: the exceptions and warnings Ember raises, as TensorFlow's `tf.errors`.

Every one derives from `EmberError` (warnings from `EmberWarning`) and from the Python
error it is a kind of, so `except em.errors.EmberError` catches them all and existing
`except ValueError` clauses keep working. (A bad argument to the API, such as an unknown
backend name, raises Python's ValueError or TypeError itself, as TensorFlow's does.)

`OpError` is the base of every error an op raises, eagerly, traced or from compiled code
(`InvalidArgumentError` for bad values at run time, as in TensorFlow, and its kind
`AssertionFailedError`, also an `AssertionError`, for a failed `assert` on a tensor;
`OpTypeError`, `OpShapeError` and `OpAttributeError` for operands and attributes an op does
not accept).
The tracer raises `ControlFlowError`, `OutOfScopeError`, `SymbolicValueError` and
`InputSignatureError` (and `TypeHintError`, also a TypeError, for an argument annotated
`em.Tensor` that cannot be converted under `experimental_follow_type_hints`), and warns
`AutoGraphWarning` for a function it cannot convert;
`ShapeError` is an impossible shape (`TensorSpec`); the passes raise
`PipelineError` and `PassFailure` (`RewriteError` from a rewrite pattern, and
`EraseInUseError` from a pass erasing an op that is still used); the backends
`NotCompilable`, `BackendError`, `JitError`, `TranslationError`, `LoweringError`,
`InterpreterError`, `PrintBindingError` and `HostBindingError` (a compiled host call bound
to the wrong types);
ahead-of-time compilation `AotError` (and `ArtifactError` when loading); the
runtime `InterpreterFallbackError` (and `BisectError` from `em.debug.find_miscompile`);
parsing and verifying IR `ParseError` and `VerificationError`; drawing a graph's SVG without
Graphviz `GraphvizUnavailable`; the CUDA backend `GpuUnavailableError` (no GPU, driver or
cuda-bindings: selecting `backend="cuda"` or `em.device("gpu:0")`), `CudaError` (a failed
CUDA driver call) and `AllocationError` (the GPU's memory is exhausted).
`em.data`'s
iterators raise `OutOfRangeError` from `get_next()` after the last element; its file readers
`DataLossError` for a damaged record file and `NotFoundError` for a missing file;
`MultiWorkerMirroredStrategy`'s collectives `UnavailableError` for a dead or frozen peer.
`em.transform` raises `TransformError` for a preprocessing_fn it cannot analyze and
`TransformArtifactError` (naming the file) for a missing or damaged working_dir.
A `ClusterCoordinator`'s functions queued after one that raised give `CancelledError`.
(The command-line tools' `ToolError` is theirs: it sets an exit status.)

Example:
  >>> import ember as em
  >>> try:
  ...     em.constant([1, 2]) // em.constant([1, 0])
  ... except em.errors.InvalidArgumentError as e:
  ...     print(type(e).__name__, isinstance(e, em.errors.OpError))
  InvalidArgumentError True
"""

from ember.backends.base import NotCompilable
from ember.backends.interpreter import InterpreterError
from ember.dialects.ember.base import (AssertionFailedError, InvalidArgumentError,
                                       OpAttributeError, OpError, OpShapeError, OpTypeError)
from ember.dialects.ember.errors import EmberError, EmberWarning
from ember.dialects.ember.parsing import ParseError
from ember.dialects.ember.types import ShapeError
from ember.dialects.ember.verifier import VerificationError
from ember.frontend.autodiff.registry import NoGradientError
from ember.frontend.autograph.conversion import AutoGraphWarning
from ember.frontend.control_flow import ControlFlowError
from ember.frontend.tracing import OutOfScopeError, SymbolicValueError
from ember.passes.bufferizable import PassFailure
from ember.passes.pipeline_syntax import PipelineError
from ember.passes.safe_erase import EraseInUseError
from ember.runtime.executor import InterpreterFallbackError, InterpreterFallbackWarning
from ember.runtime.input_signature import InputSignatureError
from ember.runtime.retracing import RetracingWarning
from ember.runtime.tiers import TierWarning
from ember.runtime.type_hints import TypeHintError

# The errors of the backends, the passes' lowerings, AOT, bisection and Graphviz are defined
# beside the code that raises them, which loads MLIR's linalg, LLVM (llvmlite) or the CUDA
# driver: they are imported on first use, so that `import ember` loads none of those.
_LAZY = {
    "BackendError": "ember.backends.cpu.backend",
    "PrintBindingError": "ember.backends.cpu.host",
    "HostBindingError": "ember.backends.cpu.host_calls",
    "JitError": "ember.backends.cpu.jit",
    "TranslationError": "ember.backends.cpu.translate",
    "LoweringError": "ember.passes.conversions.ember_to_linalg.common",
    "AotError": "ember.backends.cpu.aot.build",
    "ArtifactError": "ember.runtime.aot.compile",
    "BisectError": "ember.runtime.repro_bisect",
    "GraphvizUnavailable": "ember.passes.view_op_graph",
    "RewriteError": "ember.passes.rewrite",  # (loaded with the passes that use it)
    "CudaError": "ember.backends.cuda.driver",
    "GpuUnavailableError": "ember.backends.cuda.driver",
    "AllocationError": "ember.backends.cuda.allocator",
    # em.data's and em.distribute's, which `import ember` loads on first use too
    "DataLossError": "ember.runtime.data.errors",
    "NotFoundError": "ember.runtime.data.errors",
    "OutOfRangeError": "ember.runtime.data.iterator",
    "UnavailableError": "ember.runtime.distribute.watchdog",
    # em.transform's (loaded on first use too)
    "TransformError": "ember.runtime.transform.context",
    "TransformArtifactError": "ember.runtime.transform.context",
    # em.distribute's parameter-server coordinator
    "CancelledError": "ember.runtime.distribute.coordinator",
    # em.keras's names it does not provide (em.keras.Input, model.save)
    "KerasAPIUnavailableError": "ember.runtime.keras.unavailable",
}

__all__ = ["AssertionFailedError", "AutoGraphWarning", "BackendError", "ControlFlowError",
           "EmberError", "EmberWarning", "InputSignatureError", "InterpreterError",
           "InterpreterFallbackError", "InterpreterFallbackWarning", "InvalidArgumentError",
           "JitError", "LoweringError", "NoGradientError", "NotCompilable", "OpAttributeError",
           "OpError", "OpShapeError", "OpTypeError", "OutOfScopeError", "ParseError",
           "PassFailure", "PipelineError", "PrintBindingError", "RetracingWarning", "ShapeError",
           "SymbolicValueError", "TranslationError", "VerificationError",
           "AotError", "ArtifactError", "BisectError", "GraphvizUnavailable",
           "RewriteError", "GpuUnavailableError", "CudaError", "DataLossError", "NotFoundError",
           "AllocationError", "OutOfRangeError", "TierWarning", "HostBindingError",
           "UnavailableError"]
__all__ += ["TransformError", "TransformArtifactError"]
__all__ += ["CancelledError"]
__all__ += ["TypeHintError"]
__all__ += ["EraseInUseError"]
__all__ += ["KerasAPIUnavailableError"]


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'ember.errors' has no attribute {name!r}")
    import importlib
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later look-ups find it without this hook
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY))
