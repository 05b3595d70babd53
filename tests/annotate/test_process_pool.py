"""The local engine's worker processes (``annotate(..., n_process=2)``): the same output as one process in
every output format, a worker that dies is a clear error that ``--resume`` recovers from, and no worker
outlives the run."""
import multiprocessing
from pathlib import Path

import pytest
from spacy.tokens import DocBin

from spacy_el.annotate import annotate, read_output
from spacy_el.annotate.dispatch import BatchDispatcher
from spacy_el.extensions import get_clusters

from .components import DIE_MARKER, FAIL_MARKER, build_pipeline
from .conftest import write_inputs


def _docbin_docs(out: Path, vocab):
    docs = []
    for part in sorted(out.glob("part-*.spacy")):
        docs.extend(DocBin().from_disk(part).get_docs(vocab))
    return docs


@pytest.mark.parametrize("chunk_size,batch_size", [(4, 2), (1, 1), (100, 3)])
def test_two_processes_give_the_output_of_one(failing_nlp, failing_inputs, tmp_path, chunk_size, batch_size):
    for output_format in ("jsonl", "parquet"):
        kwargs = dict(chunk_size=chunk_size, batch_size=batch_size, progress=False, output_format=output_format)
        one = annotate(failing_nlp, failing_inputs["jsonl"], tmp_path / f"one_{output_format}", **kwargs)
        two = annotate(failing_nlp, failing_inputs["jsonl"], tmp_path / f"two_{output_format}", n_process=2, **kwargs)
        assert read_output(tmp_path / f"one_{output_format}") == read_output(tmp_path / f"two_{output_format}")
        assert (one.read, one.written, one.failed, one.parts) == (two.read, two.written, two.failed, two.parts)
    assert not multiprocessing.active_children()  # the workers stopped with the run


def test_two_processes_write_the_docbins_of_one(nlp, inputs, tmp_path):
    annotate(nlp, inputs["jsonl"], tmp_path / "one", docbin=True, chunk_size=3, progress=False)
    annotate(nlp, inputs["jsonl"], tmp_path / "two", docbin=True, chunk_size=3, n_process=2, progress=False)
    one, two = _docbin_docs(tmp_path / "one", nlp.vocab), _docbin_docs(tmp_path / "two", nlp.vocab)
    assert [d._.doc_id for d in two] == [d._.doc_id for d in one] and len(one) == 7
    for a, b in zip(one, two):
        assert a.text == b.text
        assert [(e.start_char, e.end_char, e.label_, e.kb_id_, e._.qid, e._.candidate_scores) for e in a.ents] == [
            (e.start_char, e.end_char, e.label_, e.kb_id_, e._.qid, e._.candidate_scores) for e in b.ents]
        assert get_clusters(a) == get_clusters(b)
    assert get_clusters(two[3]) == [[(0, 2), (3, 5)]]


@pytest.mark.hostile("what holds")
def test_a_worker_that_dies_is_a_clear_error_and_resume_recovers(tmp_path):
    texts = [f"Ada Mercer {i} Orvik" for i in range(12)]
    texts[10] = f"{DIE_MARKER} 10"
    src = write_inputs(tmp_path / "in", texts)["text"]
    dying = build_pipeline()
    dying.add_pipe("annotate_test_die")
    with pytest.raises(OSError, match="E532"):
        annotate(dying, src, tmp_path / "out", chunk_size=3, batch_size=1, n_process=2, progress=False)
    assert not multiprocessing.active_children()
    records, _ = read_output(tmp_path / "out")
    assert [r["id"] for r in records] == [str(i + 1) for i in range(len(records))] and len(records) <= 9
    summary = annotate(dying, src, tmp_path / "out", chunk_size=3, resume=True, progress=False)  # in this process
    assert summary.resumed_from == len(records)
    records, errors = read_output(tmp_path / "out")
    assert [r["id"] for r in records] == [str(i) for i in range(1, 13)] and errors == []


def test_failing_documents_in_workers_go_to_the_error_log(failing_nlp, tmp_path):
    texts = [f"{FAIL_MARKER} {i}" if i % 3 == 0 else f"Orvik {i}" for i in range(10)]
    src = write_inputs(tmp_path / "in", texts)["jsonl"]
    summary = annotate(failing_nlp, src, tmp_path / "out", chunk_size=4, batch_size=2, n_process=2, progress=False)
    records, errors = read_output(tmp_path / "out")
    assert [r["id"] for r in records] == [f"d{i}" for i in range(10) if i % 3]
    assert [e["id"] for e in errors] == [f"d{i}" for i in range(10) if i % 3 == 0]
    assert all(e["error"].startswith("ValueError: the test component refuses") for e in errors)
    assert (summary.read, summary.written, summary.failed) == (10, 6, 4)


def test_a_missing_pipeline_with_two_processes(inputs, tmp_path):
    with pytest.raises(OSError, match=r"^\[spacy_el E831\] Cannot load the pipeline"):
        annotate(tmp_path / "no_such_pipeline", inputs["text"], tmp_path / "out", n_process=2, progress=False)
    assert not multiprocessing.active_children()


class _Echo(BatchDispatcher):
    """Gives results back in reverse order of sending, and a batch twice when asked to."""

    def __init__(self, batch_size: int, repeat: bool = False) -> None:
        super().__init__(batch_size)
        self.sent, self.repeat = [], repeat

    def _send(self, batch):
        self.sent.append(batch)

    def _receive(self):
        batch = self.sent.pop() if not self.repeat else self.sent[-1]
        return [(position, text.upper(), None) for position, text in batch]


def test_the_dispatcher_puts_results_in_order_across_chunks():
    echo = _Echo(batch_size=2)
    first, second = echo.submit(["a", "b", "c"]), echo.submit(["d", "e"])
    assert [len(batch) for batch in echo.sent] == [2, 1, 2]
    counted = []
    assert echo.collect(first, lambda: counted.append(1)) == [("A", None), ("B", None), ("C", None)]
    assert len(counted) == 5  # the second chunk arrived first: counted as it arrived
    assert echo.collect(second, lambda: counted.append(1)) == [("D", None), ("E", None)]
    assert len(counted) == 5


def test_the_dispatcher_refuses_a_result_twice():
    echo = _Echo(batch_size=2, repeat=True)
    ticket = echo.submit(["a", "b", "c"])
    with pytest.raises(RuntimeError, match="E501"):
        echo.collect(ticket, lambda: None)
