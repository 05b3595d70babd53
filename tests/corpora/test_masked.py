"""Text-masked documents (GUM's Reddit documents: every word replaced by underscores)."""
import spacy

from spacy.training import Example

from spacy_el.corpora.masked import is_text_masked, unmasked, without_masked

NLP = spacy.blank("en")


def test_a_document_of_underscore_words_is_masked():
    assert is_text_masked(NLP("___ __ ______ ____"))
    assert is_text_masked(NLP("____ ___\n\n__ _"))  # whitespace tokens do not count


def test_a_real_document_with_some_underscores_is_not_masked():
    assert not is_text_masked(NLP("Fill in the blank : ___ ."))
    assert not is_text_masked(NLP("snake_case"))


def test_empty_and_whitespace_only_documents_are_not_masked():
    assert not is_text_masked(NLP(""))
    assert not is_text_masked(NLP("   \n "))


def test_unmasked_keeps_the_documents_with_text_in_order():
    docs = [NLP("First ."), NLP("____ __"), NLP("Third .")]
    assert [doc.text for doc in unmasked(docs)] == ["First .", "Third ."]


def test_without_masked_filters_a_corpus_by_its_references():
    docs = [NLP("First ."), NLP("____ __")]
    corpus = without_masked(lambda nlp: (Example(nlp.make_doc(d.text), d) for d in docs))
    assert [eg.reference.text for eg in corpus(NLP)] == ["First ."]
