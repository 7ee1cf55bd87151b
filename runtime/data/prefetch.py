"""`Dataset.prefetch`'s background producer: a thread filling a bounded queue.

The consumer is a generator: when it is closed or dropped (the iterator is garbage), its
`finally` tells the thread to stop, and the thread ends at its next put. An error raised
while producing is passed through the queue and re-raised in the consumer.
"""

import queue
import threading

from ember.runtime.data.optimize import current_options

_END = object()
_POLL_SECONDS = 0.01


class _Failure:
    def __init__(self, error):
        self.error = error


def _produce(source, buffer: queue.Queue, stop: threading.Event, options):
    current_options.set(options)  # the pipeline's options, for the optimisations (optimize.py)

    def put(item):
        while not stop.is_set():
            try:
                buffer.put(item, timeout=_POLL_SECONDS)
                return True
            except queue.Full:
                continue
        return False

    try:
        for element in source:
            if not put(element):
                return
        put(_END)
    except BaseException as error:  # noqa: BLE001 - every error goes to the consumer
        put(_Failure(error))
    finally:
        close = getattr(source, "close", None)
        if close is not None:
            close()


def prefetched(source, buffer_size: int):
    """Iterates `source` through a thread that runs up to `buffer_size` elements ahead."""
    buffer = queue.Queue(maxsize=buffer_size)
    stop = threading.Event()
    thread = threading.Thread(target=_produce, args=(source, buffer, stop,
                                                     current_options.get()),
                              name="ember-data-prefetch", daemon=True)
    thread.start()
    try:
        while True:
            item = buffer.get()
            if item is _END:
                return
            if isinstance(item, _Failure):
                raise item.error
            yield item
    finally:
        stop.set()
        if thread is not threading.current_thread():
            thread.join(timeout=1.0)
