"""The parameter-server tasks of an in-process cluster: one thread per task, applying the
updates the workers send to the variables placed on it (TF's in-process ps servers).

A worker's scheduled function sends, when it returns, one request per task holding its
variables' updates; the tasks apply them at the same time (each update under its variable's
lock, so a task never races the coordinator writing a variable), and the worker waits for
their acknowledgements before the function's RemoteValue is ready: once `fetch()` or
`join()` returns, the updates are visible, as TF's.
"""

from __future__ import annotations

import queue
import threading


class ParameterServer:
    """Parameter-server task `task`: a thread serving update requests (see the module)."""

    def __init__(self, task: int):
        self.task = task
        self._requests: queue.Queue = queue.Queue()
        self._thread = threading.Thread(target=_serve, args=(self._requests,), daemon=True,
                                        name=f"ember-ps-{task}")
        self._thread.start()

    def send(self, updates: list) -> "_Request":
        """Queues `updates` ((variable, value read, value written) triples); returns the
        request, whose `wait()` returns once they are applied (raising what failed)."""
        request = _Request(updates)
        self._requests.put(request)
        return request

    def stop(self) -> None:
        self._requests.put(None)


class _Request:
    def __init__(self, updates: list):
        self.updates = updates
        self.done = threading.Event()
        self.error = None

    def wait(self) -> None:
        self.done.wait()
        if self.error is not None:
            raise self.error


def _serve(requests: queue.Queue) -> None:
    while True:
        request = requests.get()
        if request is None:
            return
        try:
            _apply(request.updates)
        except BaseException as error:  # noqa: BLE001 - the worker waiting re-raises it
            request.error = error
        request.updates = None
        done, request = request.done, None  # while idle, keep no variable alive
        done.set()


def _apply(updates: list) -> None:
    for var, read, written in updates:
        var._apply_update(read, written)


def stop_all(servers: list) -> None:
    for server in servers:
        server.stop()
