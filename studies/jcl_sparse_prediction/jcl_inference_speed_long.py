"""The long-document part of ``benchmarks/jcl_inference_speed.py`` (``--long-tokens N``), frozen at commit d957b60.

Not maintained (see REPORT.md): one N-token document (the test texts joined) run by each pipeline in a fresh
process, with the dense decoding that prediction used before the sparse graph; it ran inside that module
(``python -m benchmarks.jcl_inference_speed ... --long-tokens 20000``).
"""
import multiprocessing
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

import spacy
import torch
from spacy.language import Language

from benchmarks.common import proc_status_mb, process_peak_mb, reset_peak_rss, timed
from benchmarks.joint_coref_linker import NAME  # the component (the module's own NAME was the file's)
from benchmarks.results_io import Row, row


def long_doc_run(model: str, text: str, threads: int, settings: Optional[Dict[str, Any]] = None) -> Tuple[float, float, float, bool]:
    """Run ``model`` on one long ``text`` in *this* process: ``(seconds, RSS MB after loading, peak RSS MB while
    the document runs, whether that peak is the document's alone)``. Called in a fresh process, so that other
    models do not count; the peak is reset after loading where Linux allows it (loading has a transient peak of
    its own), else it is the process peak. ``settings``: the component's, set after loading (``configure``)."""
    torch.set_num_threads(threads)
    nlp = spacy.load(model)
    nlp.get_pipe(NAME).configure(**(settings or {}))
    loaded = proc_status_mb("VmRSS") or process_peak_mb()
    own_peak = reset_peak_rss()
    _, seconds = timed(lambda: nlp(text))
    peak = proc_status_mb("VmHWM") if own_peak else process_peak_mb()
    return seconds, loaded, peak, own_peak


def long_doc_rows(dataset: str, models: Sequence[Tuple[str, Path]], settings: Dict[str, Dict[str, Any]],
                  nlp: Language, texts: Sequence[str], tokens: int, threads: int) -> List[Row]:
    """``long_doc_seconds`` and ``long_doc_peak_rss_mb`` of each pipeline on ``texts`` joined and cut at ``tokens``
    tokens, each in a fresh process (:func:`long_doc_run`)."""
    long_doc = nlp.make_doc("\n\n".join(texts))[:tokens].as_doc()
    rows: List[Row] = []
    for name, path in models:
        with multiprocessing.get_context("spawn").Pool(1) as pool:
            seconds, loaded, peak, own_peak = pool.apply(
                long_doc_run, (str(path), long_doc.text, threads, settings.get(name, {})))
        what = "peak RSS while it runs" if own_peak else "process peak RSS, loading included"
        note = f"one {len(long_doc):,}-token document (the test texts joined); {threads} torch threads"
        rows.append(row(name, dataset, "long_doc_seconds", round(seconds, 1), note))
        rows.append(row(name, dataset, "long_doc_peak_rss_mb", round(peak),
                        f"{note}; {what}, in a fresh process holding {loaded:.0f} MB after loading the pipeline"))
    return rows


