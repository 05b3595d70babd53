__title__ = "spacy_el"
__version__ = "0.1.0"
