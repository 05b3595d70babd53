"""spacy_el.training.batches: a corpus without examples is refused as spaCy's own training loop refuses it."""
import pytest
import spacy

from spacy_el.training.batches import ResumableBatches


def test_an_empty_training_corpus_gives_spacys_error():
    batches = ResumableBatches(spacy.blank("en"), lambda nlp: [], lambda examples: [list(examples)], max_epochs=1)
    with pytest.raises(ValueError, match="E986"):
        batches.load()
