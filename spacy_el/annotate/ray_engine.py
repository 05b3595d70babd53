"""The Ray engine of ``annotate`` (``--engine ray``, ``pip install 'spacy_el[ray]'``).

The driver (the process that runs ``annotate``) does what it does with the local engine: it reads the input
chunk by chunk with the same readers, and commits each chunk with the same writer and manifest, so the
output format, the commit protocol and ``--resume`` (exactly once) are those of the local engine. Ray only
computes the records of a chunk: the chunk's documents go, ``batch_size`` at a time, to a pool of Ray
actors (one CPU each) that each load the pipeline once, when they start, and run ``nlp.pipe`` over a batch
(isolating documents whose component raises, as the local engine does). An actor
(:class:`~spacy_el.annotate.worker.AnnotateWorker`, the class of the local worker processes too) sends
back each document's ``{"entities", "clusters"}`` or its error, with its position; the driver puts them
back in input order (:class:`~spacy_el.annotate.dispatch.BatchDispatcher`) and adds ids and carried
fields. The actors stay up for the whole run.

Ray is imported only here, and only when the engine is used.
"""
from pathlib import Path
from typing import Any, List, Optional, Tuple

from ..errors import Errors
from .compute import ConfiguredPipeline, error_text
from .dispatch import BatchDispatcher, Result
from .worker import AnnotateWorker

INSTALL_HINT = "pip install 'spacy_el[ray]'"
# An actor that dies (its node lost, killed for memory) is restarted and its batch retried: a batch is
# pure computation, so running it again is safe. Only for a pipeline loaded from a path or package: a
# Language object reaches the actors through the object store, which Ray does not promise to keep for a
# restart (ray-project/ray#53727).
MAX_RESTARTS = 3


def import_ray():
    try:
        import ray
    except ImportError as err:
        raise ImportError(Errors.E534.format(hint=INSTALL_HINT)) from err
    return ray


def check_ray(output_format: str) -> None:
    """Refuse what the Ray engine cannot do before anything is written: Ray missing, DocBin output."""
    import_ray()
    if output_format == "docbin":
        raise ValueError(Errors.E533)


def _pipeline_arg(ray, pipeline: Any) -> Any:
    """What the actors load: a ``Language`` goes through Ray's object store (pickled once); a path that exists
    here is made absolute (on a cluster it must exist at the same place on every node); a package name as is; a
    :class:`ConfiguredPipeline` with its name so resolved."""
    from spacy.language import Language

    if isinstance(pipeline, Language):
        return ray.put(pipeline)
    if isinstance(pipeline, ConfiguredPipeline):
        return ConfiguredPipeline(_pipeline_arg(ray, pipeline.name), pipeline.settings)
    path = Path(pipeline)
    return str(path.resolve()) if path.exists() else str(pipeline)


class RayPool(BatchDispatcher):
    """A context manager: connects to Ray (or starts a local Ray), starts the actors and checks that each
    loaded the pipeline; on exit kills them, and shuts Ray down if it started it."""

    yields_docs = False

    def __init__(self, pipeline: Any, batch_size: int, top_candidates: int, address: Optional[str] = None,
                 actors: Optional[int] = None) -> None:
        super().__init__(batch_size)
        self.pipeline = pipeline
        self.top_candidates = top_candidates
        self.address = address
        self.n_actors = actors
        self.workers: List[Any] = []
        self._actor_pool: Any = None
        self._pipeline_arg: Any = None
        self._started_ray = False

    def __enter__(self) -> "RayPool":
        ray = self.ray = import_ray()
        if not ray.is_initialized():
            try:
                ray.init(address=self.address, include_dashboard=False, logging_level="ERROR")
            except Exception as err:
                where = f"the Ray cluster at {self.address}" if self.address else "a local Ray"
                raise OSError(Errors.E535.format(where=where, err=error_text(err))) from err
            self._started_ray = True
        try:
            n_actors = self.n_actors or max(1, int(ray.cluster_resources().get("CPU", 1)))
            self._pipeline_arg = pipeline = _pipeline_arg(ray, self.pipeline)
            restarts = 0 if isinstance(pipeline, ray.ObjectRef) else MAX_RESTARTS
            worker_class = ray.remote(num_cpus=1, max_restarts=restarts, max_task_retries=restarts)(AnnotateWorker)
            self.workers = [worker_class.remote(pipeline, self.batch_size, self.top_candidates)
                            for _ in range(n_actors)]
            for error in ray.get([worker.ready.remote() for worker in self.workers]):
                if error is not None:
                    raise OSError(error)
            from ray.util import ActorPool

            self._actor_pool = ActorPool(self.workers)  # a batch goes to the first idle actor
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *exc: Any) -> None:
        for worker in self.workers:
            try:
                self.ray.kill(worker)
            except Exception:
                pass
        self.workers = []
        self._actor_pool = None
        self._pipeline_arg = None
        if self._started_ray:
            self.ray.shutdown()
            self._started_ray = False

    def _send(self, batch: List[Tuple[int, str]]) -> None:
        self._actor_pool.submit(lambda worker, pairs: worker.annotate.remote(pairs), batch)

    def _receive(self) -> List[Result]:
        return self._actor_pool.get_next_unordered()
