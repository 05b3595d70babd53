"""An ordered, bounded parallel map for the dump readers.

``multiprocessing.Pool.imap`` reads its whole input in a feeder thread as fast as it can, so a reader
faster than the workers would fill memory with pending chunks. ``ordered_map`` keeps at most
``window`` chunks in flight and yields the results in input order, so the build is deterministic and its
memory bounded whatever the dump size. ``n_process <= 1`` runs in this process (no pool), as the tests do.
"""
import collections
import multiprocessing
from typing import Any, Callable, Iterable, Iterator, Optional, Sequence, TypeVar

T = TypeVar("T")
R = TypeVar("R")


def ordered_map(
    func: Callable[[T], R],
    chunks: Iterable[T],
    n_process: int,
    initializer: Optional[Callable[..., None]] = None,
    initargs: Sequence[Any] = (),
    window: Optional[int] = None,
) -> Iterator[R]:
    if n_process <= 1:
        if initializer is not None:
            initializer(*initargs)
        for chunk in chunks:
            yield func(chunk)
        return
    # fork shares the large read-only arrays of the initializer with the workers (copy-on-write); spawn
    # is the fallback where fork does not exist.
    method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
    context = multiprocessing.get_context(method)
    window = window or 4 * n_process
    with context.Pool(n_process, initializer=initializer, initargs=tuple(initargs)) as pool:
        pending: "collections.deque" = collections.deque()
        for chunk in chunks:
            pending.append(pool.apply_async(func, (chunk,)))
            if len(pending) >= window:
                yield pending.popleft().get()
        while pending:
            yield pending.popleft().get()


def chunked(items: Iterable[T], size: int) -> Iterator[list]:
    chunk: list = []
    for item in items:
        chunk.append(item)
        if len(chunk) >= size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk
