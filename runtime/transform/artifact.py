"""The working_dir of an analysis: written by emt.analyze, read by emt.TFTransformOutput.

    working_dir/
      transform_fn/transform.json      format, version, the preprocessing_fn (module,
                                       qualname, sha256 of its source), each analyzer call
                                       (kind, parameters) in call order, sha256 of every file
      transform_fn/statistics.npz      the statistics (numpy arrays; no pickle)
      transform_fn/assets/<name>       each vocabulary, one token per line (tf.Transform's)
      transformed_metadata/schema.json the output features: dtype, shape, integer domain

Why not a compiled artifact (em.aot): the transform must work on string features (vocabulary
lookups), which live on the host and cannot cross a C ABI, and it must inline into the
caller's em.function or Dataset.map trace so it compiles with the rest of the input
pipeline. So the statistics are saved as data, and the preprocessing_fn, found again by its
module and name (or passed to TFTransformOutput), is re-traced with them as constants; the
sha256 of its source and the analyzer calls are checked, so a changed function is an error,
not a silent mismatch. Every file is checked against its sha256 when loaded, and an error
names the file.
"""

from __future__ import annotations

import hashlib
import importlib
import inspect
import json
import os
import shutil
import sys

import numpy as np

from ember.runtime.transform.context import TransformArtifactError
from ember.runtime.transform.mappers import read_vocabulary

FORMAT = "ember-transform"
VERSION = 1
MANIFEST = os.path.join("transform_fn", "transform.json")
STATISTICS = os.path.join("transform_fn", "statistics.npz")
SCHEMA = os.path.join("transformed_metadata", "schema.json")
ASSETS = os.path.join("transform_fn", "assets")


def function_reference(fn) -> dict:
    """How to find `fn` again: module, qualname and the sha256 of its source (or None)."""
    try:
        source = inspect.getsource(fn)
    except (OSError, TypeError):
        source = None
    return {"module": getattr(fn, "__module__", None),
            "qualname": getattr(fn, "__qualname__", None),
            "source_sha256": _sha(source.encode()) if source is not None else None}


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _file_sha(path: str) -> str:
    with open(path, "rb") as f:
        return _sha(f.read())


class Artifact:
    """The statistics and vocabularies of one analysis, by analyzer call index."""

    def __init__(self, working_dir: str, manifest: dict, statistics: dict,
                 tokens: dict | None = None):
        self.working_dir = working_dir
        self.manifest = manifest
        self._statistics = statistics  # npz key -> array
        self._tokens = tokens or {}     # vocabularies not yet written (during emt.analyze)
        self.schema: dict | None = None

    # -- reading ---------------------------------------------------------------------------

    @classmethod
    def load(cls, working_dir) -> "Artifact":
        """The analysis in `working_dir`, every file checked; TransformArtifactError naming
        the file that is missing, unreadable or changed."""
        working_dir = os.fspath(working_dir)
        if not os.path.isdir(working_dir):
            raise TransformArtifactError(
                f"emt.TFTransformOutput: {working_dir} is not a directory; give the "
                "working_dir that emt.analyze or emt.analyze_and_transform wrote")
        manifest = _read_json(working_dir, MANIFEST)
        if manifest.get("format") != FORMAT or manifest.get("version") != VERSION:
            raise TransformArtifactError(
                f"{os.path.join(working_dir, MANIFEST)}: not an em.transform manifest of "
                f"format {FORMAT!r} version {VERSION} (it says {manifest.get('format')!r} "
                f"version {manifest.get('version')!r}); re-run emt.analyze")
        _check_manifest(manifest, os.path.join(working_dir, MANIFEST))
        for name, digest in manifest["files"].items():
            path = os.path.join(working_dir, name)
            if not os.path.isfile(path):
                raise TransformArtifactError(f"{path}: missing from the em.transform "
                                             "working_dir; re-run emt.analyze")
            if _file_sha(path) != digest:
                raise TransformArtifactError(
                    f"{path}: damaged or changed since emt.analyze wrote it (its sha256 "
                    "differs from transform.json's); re-run emt.analyze")
        try:
            with np.load(os.path.join(working_dir, STATISTICS), allow_pickle=False) as npz:
                statistics = {k: npz[k] for k in npz.files}
        except (OSError, ValueError) as error:
            raise TransformArtifactError(f"{os.path.join(working_dir, STATISTICS)}: cannot "
                                         f"be read ({error})") from None
        for index, analyzer in enumerate(manifest["analyzers"]):
            for key in analyzer["statistics"]:
                if f"a{index}_{key}" not in statistics:
                    raise TransformArtifactError(
                        f"{os.path.join(working_dir, STATISTICS)}: has no statistic {key!r} "
                        f"of analyzer #{index + 1}; re-run emt.analyze")
        artifact = cls(working_dir, manifest, statistics)
        artifact.schema = _read_json(working_dir, SCHEMA)
        return artifact

    def statistics(self, index: int, record: dict) -> dict:
        """The statistics of analyzer call `index`, checked to be the analyzer `record`."""
        analyzers = self.manifest["analyzers"]
        if index >= len(analyzers):
            raise self._changed(f"it calls more analyzers ({index + 1} or more) than the "
                                f"{len(analyzers)} analyzed")
        saved = {k: v for k, v in analyzers[index].items() if k != "statistics"}
        if saved != record:
            raise self._changed(f"analyzer call #{index + 1} is {record}, but the analysis "
                                f"recorded {saved}")
        return {k: self._statistics[f"a{index}_{k}"]
                for k in analyzers[index]["statistics"]}

    def check_complete(self, calls: int) -> None:
        if calls != len(self.manifest["analyzers"]):
            raise self._changed(f"it called {calls} analyzers, the analysis recorded "
                                f"{len(self.manifest['analyzers'])}")

    def _changed(self, what: str) -> TransformArtifactError:
        return TransformArtifactError(
            f"the preprocessing_fn does not match the analysis in {self.working_dir}: {what}. "
            "A preprocessing_fn must call the same analyzers in the same order each time; "
            "re-run emt.analyze after changing it")

    def vocabulary_file(self, name: str) -> str:
        if name not in self.manifest["vocabularies"]:
            known = ", ".join(sorted(self.manifest["vocabularies"])) or "none"
            raise TransformArtifactError(f"{self.working_dir} has no vocabulary named "
                                         f"{name!r} (it has: {known})")
        return os.path.join(self.working_dir, ASSETS, name)

    def vocabulary(self, name: str) -> list[bytes]:
        if name in self._tokens:
            return self._tokens[name]
        return read_vocabulary(self.vocabulary_file(name), "emt.TFTransformOutput")

    def preprocessing_fn(self):
        """The analyzed preprocessing_fn, imported by its module and qualname."""
        ref = self.manifest["preprocessing_fn"]
        module_name, qualname = ref.get("module"), ref.get("qualname") or ""
        how = ("pass it: emt.TFTransformOutput(working_dir, preprocessing_fn=...), or define "
               "it at the top level of an importable module")
        if "<" in qualname or not module_name:
            raise TransformArtifactError(
                f"{os.path.join(self.working_dir, MANIFEST)}: the preprocessing_fn "
                f"{module_name}.{qualname} cannot be imported (a lambda or nested "
                f"function); {how}")
        try:
            obj = sys.modules[module_name] if module_name == "__main__" else \
                importlib.import_module(module_name)
            for part in qualname.split("."):
                obj = getattr(obj, part)
        except (ImportError, AttributeError) as error:
            raise TransformArtifactError(
                f"{os.path.join(self.working_dir, MANIFEST)}: cannot find the "
                f"preprocessing_fn {module_name}.{qualname} ({error}); {how}") from None
        return obj

    def check_function(self, fn) -> None:
        ref = self.manifest["preprocessing_fn"]
        saved = ref.get("source_sha256")
        now = function_reference(fn)["source_sha256"]
        if saved is not None and now is not None and saved != now:
            raise TransformArtifactError(
                f"{os.path.join(self.working_dir, MANIFEST)}: the source of the "
                f"preprocessing_fn {getattr(fn, '__qualname__', fn)} differs from the one "
                f"analyzed ({ref.get('module')}.{ref.get('qualname')}: sha256 of its source "
                "differs); re-run emt.analyze after changing it")

    # -- writing ---------------------------------------------------------------------------

    def write(self, vocabularies: dict) -> None:
        """Writes assets, statistics, schema, then the manifest (with every file's sha256)
        last: a working_dir whose writing stopped half-way has no valid manifest."""
        root = self.working_dir
        shutil.rmtree(os.path.join(root, ASSETS), ignore_errors=True)  # an earlier analysis'
        os.makedirs(os.path.join(root, ASSETS), exist_ok=True)
        os.makedirs(os.path.join(root, os.path.dirname(SCHEMA)), exist_ok=True)
        manifest_path = os.path.join(root, MANIFEST)
        if os.path.exists(manifest_path):
            os.remove(manifest_path)
        files = {}
        for name, tokens in vocabularies.items():
            rel = os.path.join(ASSETS, name)
            with open(os.path.join(root, rel), "wb") as f:
                f.write(b"".join(t + b"\n" for t in tokens))
            files[rel] = _file_sha(os.path.join(root, rel))
        with open(os.path.join(root, STATISTICS), "wb") as f:
            np.savez(f, **self._statistics)
        files[STATISTICS] = _file_sha(os.path.join(root, STATISTICS))
        _write_json(os.path.join(root, SCHEMA), self.schema)
        files[SCHEMA] = _file_sha(os.path.join(root, SCHEMA))
        self.manifest["files"] = files
        _write_json(manifest_path + ".tmp", self.manifest)
        os.replace(manifest_path + ".tmp", manifest_path)


def _check_manifest(manifest: dict, path: str) -> None:
    shapes = {"preprocessing_fn": dict, "analyzers": list, "vocabularies": dict,
              "files": dict, "raw_feature_spec": dict}
    for key, kind in shapes.items():
        if not isinstance(manifest.get(key), kind):
            raise TransformArtifactError(f"{path}: damaged: {key!r} is missing or not a "
                                         f"{kind.__name__}; re-run emt.analyze")
    if not all(isinstance(a, dict) and isinstance(a.get("statistics"), list)
               for a in manifest["analyzers"]):
        raise TransformArtifactError(f"{path}: damaged: an analyzer entry lacks its "
                                     "statistics; re-run emt.analyze")


def _read_json(working_dir: str, rel: str) -> dict:
    path = os.path.join(working_dir, rel)
    try:
        with open(path, encoding="utf-8") as f:
            value = json.load(f)
    except FileNotFoundError:
        raise TransformArtifactError(f"{path}: missing; {working_dir} is not an em.transform "
                                     "working_dir (run emt.analyze to write one)") from None
    except (OSError, ValueError) as error:
        raise TransformArtifactError(f"{path}: cannot be read as JSON ({error}); re-run "
                                     "emt.analyze") from None
    if not isinstance(value, dict):
        raise TransformArtifactError(f"{path}: not a JSON object; re-run emt.analyze")
    return value


def _write_json(path: str, value: dict) -> None:
    with open(path, "w", encoding="utf-8") as f:
        json.dump(value, f, indent=1, sort_keys=True)
        f.write("\n")
