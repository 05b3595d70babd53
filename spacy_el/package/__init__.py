"""Shipping a trained pipeline: giving its components a KB of your choice (``attach_kb.py``, ``python -m spacy_el
kb attach``) and making it fit to distribute, with open-data aliases, a pruned string store and its data's
licences in its meta (``distribute.py``, ``python -m spacy_el package``)."""
