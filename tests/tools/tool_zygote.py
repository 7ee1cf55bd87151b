"""A process that has imported one command-line tool and forks a fresh child per run of it.

    python tool_zygote.py EXECUTABLE MODULE:FUNCTION

An installed tool (`ember-opt`, `ember-compile`, ...) is a console script: `from MODULE
import FUNCTION; sys.exit(FUNCTION())`. Its import is most of a short run (~0.3-0.5 s of CPU,
the MLIR bindings, numpy and Ember), and the tool tests run it hundreds of times. This
process does the import once, as the script does (sys.path[0] the script's folder), and
then, for each request, forks: the child is a process in the state the script reaches after
its import. It takes the request's argv, environment, working directory and standard
streams (files the caller named) and leaves the loop to run the script's last line, so it
ends as the script would: its exit status, or the signal that killed it, and the
interpreter's own shutdown. Nothing runs a tool inside this process, so one run cannot
affect the next (the way the fuzz workers of tests/fuzz/pool.py can).

The protocol, one JSON object per line: this process writes {"ready": pid} once; the
caller writes a request {"argv", "env", "cwd", "stdin", "stdout", "stderr"} (stdin may be
null: /dev/null); this process answers {"pid": child} at once and {"status": n} when the
child is gone, n as subprocess's returncode (negative: the signal). End of input ends it.
"""

from __future__ import annotations

import importlib
import json
import os
import sys


def _serve(requests, replies) -> dict:
    """Answers requests until input ends (then exits); returns only in a forked child."""
    for line in requests:
        request = json.loads(line)
        pid = os.fork()
        if pid == 0:
            requests.close()
            replies.close()
            return request
        replies.write(json.dumps({"pid": pid}) + "\n")
        replies.flush()
        _, status = os.waitpid(pid, 0)
        replies.write(json.dumps({"status": os.waitstatus_to_exitcode(status)}) + "\n")
        replies.flush()
    sys.exit(0)


def _become(request: dict) -> None:
    """Makes this child the tool's process: streams, directory, environment, argv."""
    for fd, path, flags in ((0, request["stdin"] or os.devnull, os.O_RDONLY),
                            (1, request["stdout"], os.O_WRONLY),
                            (2, request["stderr"], os.O_WRONLY)):
        opened = os.open(path, flags)
        os.dup2(opened, fd)
        os.close(opened)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    sys.argv = list(request["argv"])


def main() -> None:
    executable, entry = sys.argv[1], sys.argv[2]
    # The streams this process talks on; fds 0-2 are the children's to take.
    requests = os.fdopen(os.dup(0), "r", encoding="utf-8")
    replies = os.fdopen(os.dup(1), "w", encoding="utf-8")
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1):
        os.dup2(devnull, fd)
    sys.path[0] = os.path.dirname(executable)  # as for the console script
    module, _, function = entry.partition(":")
    tool = getattr(importlib.import_module(module), function)
    replies.write(json.dumps({"ready": os.getpid()}) + "\n")
    replies.flush()
    _become(_serve(requests, replies))
    sys.exit(tool())  # the console script's last line


if __name__ == "__main__":
    main()
