"""The interestingness test of `ember-reduce`, run as `mlir-reduce`'s Tester runs it.

A candidate is first checked: it must parse (through dialects/ember/parsing.py, so text that
would abort MLIR's parser is refused) and verify, with MLIR's verifier and with the ember op
specs. An invalid candidate is uninteresting without running the script, as upstream, so a
reduction never keeps an error the reducer itself made. A valid candidate is written to a fresh
temporary `.mlir` file and the script runs as

    SCRIPT [TEST_ARG ...] FILE

(the candidate's path last; SCRIPT is a path, or a command found on PATH); exit status 0
means "not interesting", any other exit status "interesting" (`mlir::Tester::isInteresting`;
its documentation asks scripts to exit with 1). A script that cannot be started, or dies of
a signal, stops the reduction with an error, as upstream's `report_fatal_error` does.

Where Ember differs: the script's stdout and stderr are discarded (the reduced module goes to
stdout), the number of tests run is counted for the progress line, and the script runs with
EMBER_REPRO_DIR=off unless the caller set it (each failing candidate would otherwise leave a
crash reproducer behind, hundreds per reduction).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile

from mlir import ir

from ember.dialects.ember import verifier
from ember.passes import reproducer
from ember.dialects.ember.parsing import ParseError, parse_module
from ember.tools.driver import ToolError


def count_ops(module: ir.Module) -> int:
    """Every operation nested in the module (functions and terminators included)."""
    return len(verifier.iter_ops(module.operation))


def checked_module(text: str, context: ir.Context) -> ir.Module | None:
    """`text` parsed and verified, or None when it does not parse or verify."""
    with context, ir.Location.unknown():
        try:
            module = parse_module(text)
        except ParseError:
            return None
        if not is_valid(module):
            return None
        return module


def is_valid(module: ir.Module) -> bool:
    """Whether `module` passes MLIR's verifier and the ember op specs."""
    try:
        module.operation.verify()
    except ir.MLIRError:
        return False
    return not verifier.verify(module)


class Tester:
    """Runs `script` on candidate files in `workdir` (see the module docstring)."""

    def __init__(self, script: str, script_args: list[str], workdir: str):
        self.script = script
        # as given (relative to the working directory), else found on PATH like a command
        found = shutil.which(script) if os.sep not in script else None
        self.path = os.path.abspath(script if found is None or os.path.exists(script)
                                    else found)
        self.script_args = list(script_args)
        self.workdir = workdir
        self.runs = 0

    def check_script(self) -> None:
        """ToolError unless `script` names an executable file."""
        if not os.path.exists(self.path):
            raise ToolError(f"the interestingness test '{self.script}' does not exist")
        if os.path.isdir(self.path) or not os.access(self.path, os.X_OK):
            raise ToolError(f"the interestingness test '{self.script}' is not an executable "
                            "file: make it executable (chmod +x) and start it with a '#!' "
                            "line")

    def interesting(self, text: str) -> bool:
        """Whether the script calls the module text `text` interesting (nonzero exit)."""
        fd, path = tempfile.mkstemp(prefix="ember-reduce-", suffix=".mlir", dir=self.workdir)
        try:
            with os.fdopen(fd, "w") as f:
                f.write(text)
            return self._run(path)
        finally:
            os.unlink(path)

    def _run(self, path: str) -> bool:
        self.runs += 1
        command = [self.path, *self.script_args, path]
        try:
            status = subprocess.run(command, stdin=subprocess.DEVNULL,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                    env={reproducer.ENV: "off", **os.environ}).returncode
        except OSError as e:
            raise ToolError(f"cannot run the interestingness test '{self.script}': "
                            f"{e.strerror or e}") from None
        if status < 0:
            try:
                name = signal.Signals(-status).name
            except ValueError:
                name = f"signal {-status}"
            raise ToolError(f"the interestingness test '{self.script}' was killed by {name}; "
                            "a test must exit: 1 (interesting) or 0 (not interesting)")
        return status != 0
