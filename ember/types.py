"""`em.types`: the trace-type protocol (tf.types.experimental), for custom argument types."""

import types as _types

from ember.frontend.trace_types import (LiteralTraceType, PlaceholderContext, TensorTraceType,
                                       TraceType, TracingContext)

experimental = _types.SimpleNamespace(TraceType=TraceType, TracingContext=TracingContext,
                                      PlaceholderContext=PlaceholderContext)

__all__ = ["LiteralTraceType", "PlaceholderContext", "TensorTraceType", "TraceType",
           "TracingContext", "experimental"]
