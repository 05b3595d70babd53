"""Pictures of a pipeline's output: displaCy pages of links and coreference clusters (``displacy.py``,
``python -m spacy_el visualize``)."""
from .displacy import DEFAULT_KB_URL, doc_to_spans, hover_text, render, save_html

__all__ = ["DEFAULT_KB_URL", "doc_to_spans", "hover_text", "render", "save_html"]
