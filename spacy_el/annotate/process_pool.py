"""The local engine's worker processes (``annotate(..., n_process=N)`` with N > 1).

N processes start once, for the whole run, and each holds the pipeline: forked from the driver, which has
already loaded it, where the platform forks (Linux), so the workers share the driver's memory pages (the
memory-mapped KB, the weights) until they write to them; loaded again in each worker elsewhere. Each
worker computes with one torch thread, and runs the pipeline over the batches it is sent
(:class:`~spacy_el.annotate.worker.AnnotateWorker`); it sends back each document's record, not its Doc.

spaCy's own ``nlp.pipe(n_process=N)`` would start N processes per call, that is per chunk, send every Doc
back pickled, and leave both workers idle while the driver commits a chunk; this pool does none of that.
"""
import contextlib
import multiprocessing
import os
import sys
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any, Callable, Iterator, List, Optional, Set, Tuple

from ..errors import Errors
from .dispatch import BatchDispatcher, Result
from .compute import error_text, load_pipeline
from .worker import AnnotateWorker

_WORKER: Optional[AnnotateWorker] = None  # this process's worker, when it is one of the pool's processes


def _die_with_the_driver() -> None:
    """Ask Linux to kill this worker when the driver dies (``kill -9`` included), so that no worker is left
    behind holding memory. Elsewhere nothing is asked; an orphan worker then exits when it finds its task
    queue closed."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes
        import signal

        PR_SET_PDEATHSIG = 1
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):
        pass


def _start_worker(pipeline: Any, batch_size: int, top_candidates: int, output: str) -> None:
    global _WORKER
    _die_with_the_driver()
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(1)
    _WORKER = AnnotateWorker(pipeline, batch_size, top_candidates, output)


def _worker_ready() -> Optional[str]:
    return _WORKER.error if _WORKER is not None else Errors.E530


def _annotate_batch(batch: List[Tuple[int, str]]) -> List[Result]:
    return _WORKER.annotate(batch)


@contextlib.contextmanager
def one_torch_thread() -> Iterator[None]:
    """torch computes with one thread in this process while the pool runs (restored afterwards). A process
    forked while torch's OpenMP pool has several threads hangs in its first torch call (seen with torch
    2.13 CPU on Linux), and one thread per process is what a pool of processes wants anyway. Hugging
    Face's fast tokenizers are told the same (``TOKENIZERS_PARALLELISM=false``, unless the user set it):
    after a fork they would otherwise disable their own threads with a warning per worker."""
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    torch = sys.modules.get("torch")
    if torch is None:
        yield
        return
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


def start_method() -> str:
    """``fork`` where the platform has it (the workers share the loaded pipeline), else ``spawn``."""
    return "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"


class ProcessPool(BatchDispatcher):
    """A context manager: starts ``n_process`` workers that each hold the pipeline, checks that they could,
    and on exit stops them. ``docbin``: the workers send back Doc bytes, which :meth:`collect` turns into
    Docs of the driver's vocab; else they send the documents' ``doc_annotations``."""

    def __init__(self, pipeline: Any, n_process: int, batch_size: int, top_candidates: int, docbin: bool = False) -> None:
        super().__init__(batch_size)
        self.pipeline = pipeline
        self.n_process = n_process
        self.top_candidates = top_candidates
        self.docbin = docbin
        self.nlp = None
        self._executor: Optional[ProcessPoolExecutor] = None
        self._futures: Set[Future] = set()
        self._stack = contextlib.ExitStack()  # what __exit__ undoes in this process

    @property
    def yields_docs(self) -> bool:
        return self.docbin

    def __enter__(self) -> "ProcessPool":
        method = start_method()
        if method == "fork":  # load here once; the workers inherit it
            self.nlp = load_pipeline(self.pipeline)
        self._stack.enter_context(one_torch_thread())
        worker_pipeline = self.nlp if self.nlp is not None else self.pipeline
        output = "doc_bytes" if self.docbin else "annotations"
        self._executor = ProcessPoolExecutor(
            max_workers=self.n_process, mp_context=multiprocessing.get_context(method),
            initializer=_start_worker, initargs=(worker_pipeline, self.batch_size, self.top_candidates, output))
        try:
            checks = [self._executor.submit(_worker_ready) for _ in range(self.n_process)]
            for check in checks:
                error = self._result(check)
                if error is not None:
                    raise OSError(error)
            if self.docbin and self.nlp is None:
                self.nlp = load_pipeline(self.pipeline)  # the vocab that the Doc bytes are read with
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._executor is not None:
            self._executor.shutdown(wait=True, cancel_futures=True)
            self._executor = None
        self._stack.close()
        self._futures = set()

    def collect(self, positions: range, on_doc: Callable[[], Any]) -> List[Tuple[Optional[Any], Optional[str]]]:
        results = super().collect(positions, on_doc)
        if not self.docbin:
            return results
        from spacy.tokens import Doc

        return [(Doc(self.nlp.vocab).from_bytes(value), None) if error is None else (None, error)
                for value, error in results]

    def _send(self, batch: List[Tuple[int, str]]) -> None:
        # A worker that died is noticed by whichever call comes first: a result (:meth:`_result`), or the next
        # chunk's submit, which raises on a broken pool. Both say the same line.
        try:
            future = self._executor.submit(_annotate_batch, batch)
        except BrokenProcessPool as err:
            raise OSError(Errors.E532.format(err=error_text(err))) from err
        self._futures.add(future)

    def _receive(self) -> List[Result]:
        if not self._futures:
            raise RuntimeError(Errors.E531)
        done, _ = wait(self._futures, return_when=FIRST_COMPLETED)
        results: List[Result] = []
        for future in done:
            self._futures.discard(future)
            results.extend(self._result(future))
        return results

    @staticmethod
    def _result(future: Future) -> Any:
        try:
            return future.result()
        except BrokenProcessPool as err:
            raise OSError(Errors.E532.format(err=error_text(err))) from err
