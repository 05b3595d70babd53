"""Tiny test components for the annotate tests (registered on import): a fake linker that fills the link
extensions and clusters entities with the same text, and a component that raises on a marker text."""
import os
import time

import spacy
from spacy.language import Language

from spacy_el.extensions import NIL, register_extensions, set_clusters

FAIL_MARKER = "EXPLODE"
DIE_MARKER = "VANISH"  # a worker process running the pipeline exits at once (the test's own process goes on)
SLEEP_VARIABLE = "ANNOTATE_TEST_SLEEP"  # seconds annotate_test_slow sleeps per document (none when unset)
_TEST_PROCESS = os.getpid()  # forked workers inherit it, and have another pid
NAMES = {"Ada Mercer": ("PER", "Ada_Mercer", "Q1"), "Orvik": ("LOC", "Orvik", "Q2"), "Lumen": ("ORG", NIL, None)}


@Language.component("annotate_test_linker")
def annotate_test_linker(doc):
    register_extensions()
    ents = list(doc.ents)
    for ent in ents:
        _, kb_id, _ = NAMES.get(ent.text, ("", NIL, None))
        ent.kb_id_ = kb_id
    doc.ents = ents
    for ent in doc.ents:
        _, kb_id, qid = NAMES.get(ent.text, ("", NIL, None))
        ent._.qid = qid
        ent._.link_score = 0.75 if qid else None
        ent._.nil_prob = 0.1 if qid else 0.9
        ent._.candidate_scores = [[kb_id, 0.75], ["Other", 0.25], ["Third", 0.0]] if qid else []
    by_text = {}
    for ent in doc.ents:
        by_text.setdefault(ent.text, []).append((ent.start, ent.end))
    set_clusters(doc, [c for c in by_text.values() if len(c) > 1])
    return doc


@Language.component("annotate_test_fail")
def annotate_test_fail(doc):
    if FAIL_MARKER in doc.text:
        raise ValueError(f"the test component refuses {FAIL_MARKER}")
    return doc


@Language.component("annotate_test_die")
def annotate_test_die(doc):
    if DIE_MARKER in doc.text and os.getpid() != _TEST_PROCESS:
        os._exit(3)  # a worker killed (out of memory, a signal): no exception, no clean-up
    return doc


@Language.component("annotate_test_slow")
def annotate_test_slow(doc):
    """Slow only where the environment asks (a run to kill), so that its resume runs the same pipeline."""
    time.sleep(float(os.environ.get(SLEEP_VARIABLE, 0)))
    return doc


def build_pipeline(fail: bool = False, slow: bool = False) -> Language:
    nlp = spacy.blank("en")
    ruler = nlp.add_pipe("entity_ruler")
    ruler.add_patterns([{"label": label, "pattern": name} for name, (label, _, _) in NAMES.items()])
    nlp.add_pipe("annotate_test_linker")
    if fail:
        nlp.add_pipe("annotate_test_fail")
    if slow:
        nlp.add_pipe("annotate_test_slow")
    return nlp
