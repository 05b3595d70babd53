"""What several benchmarks share: default paths, data loading, timing, settings and peak memory.

What a benchmark measures stays in its own module; the peers' linking and mention helpers (``prior_only``,
gold mentions) are in ``baselines``, whose systems the other benchmarks compare with.
"""
import json
import re
import resource
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, MutableMapping, Optional, Sequence, Tuple, TypeVar, Union

import spacy
from spacy.language import Language
from spacy.tokens import Doc, DocBin, Span
from spacy.util import registry
from tqdm import tqdm

from spacy_el.corpora.qid_titles import elevant_title_docs, qid_title_map
from spacy_el.extensions import is_linked
from spacy_el.scoring.candidates import candidate_recall_at_k
from spacy_el.training.tune import kept_index

from .results_io import CURVE_STEP, ROOT, row

T = TypeVar("T")

# -- default paths (the project's layout) ---------------------------------------------------------
SHARED_DATA = ROOT.parent / "shared" / "data"
AIDA_CORPUS = ROOT / "corpus" / "aida"  # python -m spacy project run convert-aida
NER_BASELINE = ROOT / "training" / "baselines" / "ner" / "model-best"
EL_BASELINE = ROOT / "training" / "baselines" / "entity_linker" / "model-best"
MENTION_ENCODER = ROOT / "training" / "mention_encoder" / "best"  # projects/candidates: train-mention-encoder


# -- data -----------------------------------------------------------------------------------------
def generator_recall(kb: Any, generator: Callable, mentions: Sequence[Span], kb_ids: Sequence[str], k: int) -> float:
    """Recall@k of a candidate ``generator`` (``generator(kb, spans)``, e.g. a spacy_el generator) on
    ``mentions`` whose gold ids are ``kb_ids``: the share of the linked ones whose gold id it ranks in its first k."""
    ranked = [found.ids(kb) for found in generator(kb, list(mentions))] if len(mentions) else []
    return candidate_recall_at_k(ranked, list(kb_ids), [k])[f"cand_recall_at_{k}"]


def linked_ents(docs: Sequence[Doc]) -> List[Span]:
    """The gold entities of ``docs`` linked to a KB id (not NIL, not unannotated)."""
    return [ent for doc in docs for ent in doc.ents if is_linked(ent.kb_id_)]


def read_docs(path: Path, nlp: Language) -> List[Doc]:
    """The docs of a DocBin (``.spacy``) file, on ``nlp``'s vocab."""
    return list(DocBin().from_disk(path).get_docs(nlp.vocab))


def read_corpus(reader: str, nlp: Language, **kwargs: Any) -> List[Doc]:
    """The reference docs of the registered corpus reader ``reader`` built with ``kwargs``."""
    return [eg.reference for eg in registry.readers.get(reader)(**kwargs)(nlp)]


def first(datasets: Dict[str, List[Doc]], limit: int) -> Dict[str, List[Doc]]:
    """The first ``limit`` documents of each dataset (0: all of them; smoke runs)."""
    return {name: docs[:limit] for name, docs in datasets.items()} if limit else datasets


#: The ELEVANT out-of-domain sets: dataset name and file under ``<data>/elevant``.
ELEVANT_SETS = (("msnbc", "msnbc.benchmark.jsonl"), ("ace2004", "ace.benchmark.jsonl"))


def aida_and_elevant(corpus: Path, data: Path, nlp: Language, kb: Any, limit: int = 0,
                     elevant: Callable[[List[Doc]], List[Doc]] = lambda docs: docs) -> Dict[str, List[Doc]]:
    """AIDA dev and test (``<corpus>/{dev,test}.spacy``) and the ELEVANT sets with their gold QIDs as titles
    (those without a title in ``kb`` left out), each passed through ``elevant``; the first ``limit``
    documents of each."""
    datasets = {f"aida-{split}": read_docs(corpus / f"{split}.spacy", nlp) for split in ("dev", "test")}
    qids = qid_title_map(data)
    for name, file in ELEVANT_SETS:
        docs, _ = elevant_title_docs(data / "elevant" / file, nlp, qids, kb=kb)
        datasets[name] = elevant(docs)
    return first(datasets, limit)


# -- runs and timing ------------------------------------------------------------------------------
def fix_tie_breaks() -> None:
    """Seed the random generators: spaCy's entity_linker breaks ties between equal scores with
    random.shuffle, so that reruns agree."""
    spacy.util.fix_random_seed(0)


def timed(run: Callable[[], T]) -> Tuple[T, float]:
    """``run()``'s result and the wall-clock seconds it took."""
    start = time.perf_counter()
    result = run()
    return result, time.perf_counter() - start


def timed_pipe(nlp: Language, texts: Sequence[Union[str, Doc]], batch_size: int, progress: bool = False) -> Tuple[List[Doc], float]:
    """``nlp.pipe`` over ``texts`` (texts or docs): the docs and the seconds it took (with ``progress``, a tqdm bar)."""
    def run() -> List[Doc]:
        docs = nlp.pipe(texts, batch_size=batch_size)
        return list(tqdm(docs, total=len(texts), desc="pipe", leave=False) if progress else docs)

    return timed(run)


def words_per_s(docs: Sequence[Doc], seconds: float) -> int:
    return round(sum(len(d) for d in docs) / seconds)


def dev_sweep(system: str, metric: str, setting: str, values: Sequence[float],
              score: Callable[[float], float], dataset: str = "aida-dev") -> Tuple[float, List[Dict[str, Any]]]:
    """A prediction setting chosen on a dev set (``dataset``): ``score(value)`` for each of ``values``, a
    ``<metric>_<setting>_<value>`` row each ("dev sweep"), and the value with the best score (ties: the
    earlier one: :func:`spacy_el.training.tune.kept_index`, as ``python -m spacy_el tune`` keeps). RETURNS
    ``(value, rows)``."""
    scored = [(value, score(value)) for value in values]
    rows = [row(system, dataset, f"{metric}_{setting}_{value}", result, "dev sweep") for value, result in scored]
    return scored[kept_index(scored)][0], rows


def curve_rows(evaluations: Path, system: str, dataset: str, metrics: Union[str, Sequence[str]], notes: str = "",
               train_dataset: str = "aida-train") -> List[Dict[str, Any]]:
    """A training run's learning curve (``OUTPUT/evaluations.json`` of ``python -m spacy_el train``, across
    resumed runs) as results rows: for each evaluation, ``{metric}@step=N`` for each of ``metrics`` (its score on
    ``dataset``, the run's dev set) and ``train_minutes@step=N`` (wall clock since training started); and
    ``train_minutes`` on ``train_dataset``, the last evaluation's. None of them when there is no file."""
    if not evaluations.exists():
        print(f"{evaluations} does not exist: no learning curve rows for {system}")
        return []
    metrics = (metrics,) if isinstance(metrics, str) else tuple(metrics)
    records = read_evaluations(evaluations)
    rows = []
    for record in records:
        for metric in metrics:
            rows.append(row(system, dataset, f"{metric}{CURVE_STEP}{record['step']}", round(record["scores"].get(metric, 0.0), 4), notes))
        rows.append(row(system, dataset, f"train_minutes{CURVE_STEP}{record['step']}", round(record["seconds"] / 60, 1), notes))
    if records:
        last = records[-1]
        rows.append(row(system, train_dataset, "train_minutes", round(last["seconds"] / 60, 1),
                        f"{last['step']} steps, wall clock with the evaluations ({notes})" if notes else
                        f"{last['step']} steps, wall clock with the evaluations"))
    return rows


def read_evaluations(evaluations: Path) -> List[Dict[str, Any]]:
    """The evaluations of ``OUTPUT/evaluations.json`` (``spacy_el.training.resume``), by step."""
    records = json.loads(evaluations.read_text(encoding="utf8"))
    if not isinstance(records, list) or not all(isinstance(r, dict) and {"step", "seconds", "scores"} <= set(r) for r in records):
        raise ValueError(f"{evaluations} is not a list of evaluations (step, seconds, scores): written by another program?")
    return sorted(records, key=lambda r: r["step"])


def best_evaluation(evaluations: Path) -> Optional[Dict[str, Any]]:
    """The evaluation whose model is ``model-best``: the highest weighted score, the latest of equals (spaCy's loop
    saves ``model-best`` again at a score equal to the best); None without the file."""
    if not evaluations.exists():
        return None
    records = read_evaluations(evaluations)
    return max(records, key=lambda r: (r.get("score", 0.0), r["step"])) if records else None


# -- settings -------------------------------------------------------------------
@contextmanager
def temporarily(settings: MutableMapping[str, Any], key: str, value: Any) -> Iterator[None]:
    """``settings[key] = value`` for the duration, then its earlier value back."""
    before = settings[key]
    settings[key] = value
    try:
        yield
    finally:
        settings[key] = before


# -- peak memory ----------------------------------------------------------------------------------
def process_peak_mb() -> float:
    """This process's peak RSS in MB since it started (``getrusage``; portable, cannot be reset)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def proc_status_mb(field: str) -> Optional[float]:
    """``field`` of ``/proc/self/status`` in MB (``VmRSS``: resident now, ``VmHWM``: peak), None off Linux."""
    try:
        match = re.search(rf"^{field}:\s+(\d+) kB", Path("/proc/self/status").read_text(), re.MULTILINE)
    except OSError:
        return None
    return int(match.group(1)) / 1024 if match else None


def reset_peak_rss() -> bool:
    """Reset this process's peak RSS (``VmHWM``) to its current RSS (Linux ``/proc/self/clear_refs``);
    False where that is not available."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        return False
    return proc_status_mb("VmHWM") is not None

