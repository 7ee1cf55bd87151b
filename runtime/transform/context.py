"""The context an analyzer call reports to while a preprocessing_fn runs.

tf.Transform's analyzers are placeholders in the graph that Beam later fills in. Here the
preprocessing_fn runs (is traced) inside one of two contexts, kept per thread:

- `AnalysisContext` (emt.analyze): each analyzer call is numbered in call order. One whose
  statistics an earlier pass computed returns them as constants; one whose input can be
  computed now (it depends on no analyzer still unknown) records its per-batch partial
  reductions as outputs of the traced analysis function; the others wait for a later pass.
  An unknown analyzer returns a placeholder (zeros): its value is never used, and an analyzer
  fed from it is found by walking the traced IR back from its input to the placeholders.
- `TransformContext` (the transform layer): every analyzer returns the saved statistics as
  constants, after checking that call #i is the same analyzer that was analyzed.

Both name vocabularies as tf.Transform does (`vocab_<scope>`, a scope used twice gets `_1`)
and remember the integer domain of the tensors `apply_vocabulary`/`bucketize` return, which
becomes the schema (`num_buckets_for_transformed_feature`).
"""

from __future__ import annotations

import collections
import contextlib
import re
import threading

from mlir import ir

from ember.dialects.ember.errors import EmberError
from ember.frontend.tracing import current_graph


class TransformError(EmberError, ValueError):
    """A preprocessing_fn or an analyzer used in a way em.transform cannot analyze."""


class TransformArtifactError(TransformError):
    """A working_dir that is missing, damaged, or not from this preprocessing_fn."""


_state = threading.local()


def current():
    return getattr(_state, "context", None)


@contextlib.contextmanager
def active(context):
    previous = current()
    _state.context = context
    try:
        yield context
    finally:
        _state.context = previous


def require(api: str):
    """The active context; a clear error when an analyzer runs outside analyze/transform."""
    context = current()
    if context is None:
        raise TransformError(
            f"{api} is an analyzer: its value is a statistic of the whole dataset, so it "
            "can only run inside a preprocessing_fn given to emt.analyze or "
            "emt.analyze_and_transform, or applied by "
            "TFTransformOutput(working_dir).transform_features_layer()")
    return context


def sanitized_name(filename: str) -> str:
    """tf.Transform's vocabulary file name: non-word characters `_`, whitespace `-`."""
    filename = re.sub(r"[^\w\s-]", "_", filename).strip()
    return re.sub(r"[-\s]+", "-", filename)


class Context:
    """What both contexts share: analyzer numbering, vocabulary names, domains."""

    def __init__(self):
        self.records: list[dict] = []   # each analyzer call's record, in call order
        self._scopes = collections.Counter()
        self.vocab_names: dict[str, int] = {}  # vocabulary name -> analyzer index
        self._handles: dict[int, tuple] = {}   # id(path tensor) -> (tensor, name)
        self._domains: dict[int, tuple] = {}   # id(tensor) -> (tensor, lo, hi)

    def number(self, spec) -> int:
        """The call index of the analyzer `spec` (recorded in call order)."""
        self.records.append(spec.record())
        return len(self.records) - 1

    def scope(self, base: str) -> str:
        """`base`, or `base_<k>` for its k-th reuse (TensorFlow's name scopes)."""
        k = self._scopes[base]
        self._scopes[base] += 1
        return base if k == 0 else f"{base}_{k}"

    def claim_vocabulary(self, name: str, api: str) -> None:
        if name in self.vocab_names:
            raise TransformError(
                f"{api}: two vocabularies are named {name!r} in one preprocessing_fn; give "
                "each its own vocab_filename")
        self.vocab_names[name] = len(self.records)

    def register_vocabulary(self, tensor, name: str) -> None:
        self._handles[id(tensor)] = (tensor, name)

    def vocabulary_name_of(self, tensor) -> str | None:
        entry = self._handles.get(id(tensor))
        return entry[1] if entry is not None and entry[0] is tensor else None

    def set_domain(self, tensor, lo: int, hi: int) -> None:
        self._domains[id(tensor)] = (tensor, int(lo), int(hi))

    def domain_of(self, tensor):
        entry = self._domains.get(id(tensor))
        return entry[1:] if entry is not None and entry[0] is tensor else None


class AnalysisContext(Context):
    """One analysis pass: `known` holds the statistics of earlier passes by call index."""

    def __init__(self, known: dict, vocabularies: dict, asset_path):
        super().__init__()
        self.known = known
        self.vocabularies = vocabularies  # name -> tokens of the known vocabularies
        self.asset_path = asset_path      # name -> the path it will have in working_dir
        self.ready: list[tuple[int, object, list]] = []  # (index, spec, partial tensors)
        self.pending: list[int] = []
        self.specs: dict[int, object] = {}
        self._unknown: set = set()

    def analyze(self, spec) -> dict:
        """The analyzer `spec`'s outputs (name -> tensor) for this call."""
        graph = current_graph()  # the analysis function's (the transform may be anywhere)
        if graph is not None and graph.scope.parent is not None:
            raise TransformError(
                f"analyzer call #{len(self.records) + 1} ({spec.kind}) is inside "
                f"{graph.scope.what}: a full pass over the dataset cannot depend on a "
                "branch or loop of one batch (tf.Transform refuses it too); call the "
                "analyzer before the `if`/`for`/em.cond and use its result inside")
        index = self.number(spec)
        if spec.x.shape.rank == 0:
            raise TransformError(
                f"analyzer call #{index + 1} ({spec.kind}) is over a scalar, but analyzers "
                "reduce over a batch: analyze a dataset of instances (emt.analyze batches "
                "it), or give batch_size=None only for a dataset of batches")
        self.specs[index] = spec
        if index in self.known:
            return spec.outputs(self.known[index], self)
        self.pending.append(index)
        if not depends_on(spec.x, self._unknown):
            self.ready.append((index, spec, list(spec.partials())))
        outputs = spec.placeholders()
        for tensor in outputs.values():
            self._unknown.add(tensor._ir)
        return outputs

    def tokens(self, name: str):
        return self.vocabularies.get(name)

    def unknown(self, tensor) -> None:
        """Marks `tensor` (computed from a placeholder) as unknown, too."""
        self._unknown.add(tensor._ir)


class TransformContext(Context):
    """The transform: every analyzer's statistics come from the saved `artifact`."""

    def __init__(self, artifact):
        super().__init__()
        self.artifact = artifact

    def analyze(self, spec) -> dict:
        """The analyzer `spec`'s outputs (name -> tensor) for this call."""
        index = self.number(spec)
        return spec.outputs(self.artifact.statistics(index, spec.record()), self)

    def asset_path(self, name: str) -> str:
        return self.artifact.vocabulary_file(name)

    def tokens(self, name: str):
        return self.artifact.vocabulary(name)


def depends_on(tensor, values: set) -> bool:
    """Whether the traced `tensor` is computed from one of `values` (IR values): a walk up
    the use-def chains, through the ops nested in regions (cond branches, loop bodies)."""
    if not values or not hasattr(tensor, "_ir"):
        return False
    stack, seen = [tensor._ir], set()
    while stack:
        value = stack.pop()
        if value in values:
            return True
        if value in seen:
            continue
        seen.add(value)
        owner = value.owner
        if isinstance(owner, ir.Block):  # a function or region argument
            continue
        stack.extend(_operands_within(owner))
    return False


def _operands_within(op):
    """The operands of `op` and of every op nested in its regions."""
    operation = op.operation if hasattr(op, "operation") else op
    yield from operation.operands
    for region in operation.regions:
        for block in region.blocks:
            for inner in block.operations:
                yield from _operands_within(inner)
