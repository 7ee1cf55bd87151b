"""Where tracing is: the graphs being traced on each thread (innermost last; None inside
`em.init_scope`), and within a graph the scopes, its function body and each `em.cond` branch
or loop body traced into inside it. A symbolic tensor remembers the scope that made it, and
the tracer lets it be used only where that scope encloses the current one (tracing.py)."""

from __future__ import annotations

import contextlib
import threading

from ember.frontend.autodiff import recording


class Scope:
    """A region being traced into (function body, cond branch, loop body)."""

    def __init__(self, parent: "Scope | None", what: str):
        self.parent = parent
        self.what = what

    def encloses(self, other: "Scope") -> bool:
        node = self
        while node is not None:
            if node is other:
                return True
            node = node.parent
        return False


class _Thread(threading.local):
    def __init__(self):
        self.graphs: list = []  # FuncGraph, or None inside init_scope (eager)


thread_state = _Thread()


def current_graph():
    """The graph (tracing.FuncGraph) being traced on this thread, or None when eager."""
    return thread_state.graphs[-1] if thread_state.graphs else None


def active_graphs() -> list:
    return [g for g in thread_state.graphs if g is not None]


@contextlib.contextmanager
def graph_scope(graph):
    thread_state.graphs.append(graph)
    try:
        with recording.new_context():  # a tape records the ops of its own context only
            yield graph
    finally:
        thread_state.graphs.pop()


def init_scope():
    """Runs its body eagerly, even while tracing (`with em.init_scope(): ...`)."""
    return graph_scope(None)
