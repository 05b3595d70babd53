"""torch's threads in forked processes: a process forked from one whose torch has used several threads computes
with one.

torch's CPU build runs its intra-op work on an OpenMP thread pool. A forked child inherits the pool's state but
not its threads, so its first parallel torch call waits forever for threads that do not exist: spaCy's
``nlp.pipe(texts, n_process=2)`` hung that way with the default number of threads. With one thread torch runs
its work in the calling thread and never waits on the pool, and one thread per process is what a pool of
processes wants anyway (torch's own DataLoader workers do the same). A child that wants more threads can still
call ``torch.set_num_threads``; a process started with ``spawn`` or ``forkserver`` starts a fresh torch and is
unaffected.

:func:`limit_threads_after_fork` is registered when ``spacy_el.ml`` is imported (every component's model imports
it); it imports nothing itself, and acts in the child only when torch was imported before the fork.
"""
import os
import sys

__all__ = ["limit_threads_after_fork", "register_fork_handler"]

_registered = False


def limit_threads_after_fork() -> None:
    """In a forked child: torch computes with one thread (module docstring)."""
    torch = sys.modules.get("torch")
    if torch is not None and hasattr(torch, "set_num_threads"):
        torch.set_num_threads(1)


def register_fork_handler() -> None:
    """Run :func:`limit_threads_after_fork` in every child this process forks (once per process)."""
    global _registered
    if not _registered and hasattr(os, "register_at_fork"):  # not on Windows, which has no fork
        os.register_at_fork(after_in_child=limit_threads_after_fork)
        _registered = True
