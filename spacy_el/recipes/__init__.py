"""Dataset recipes: how this project's evaluation resources are made from ``../shared/data``.

They sit above :mod:`spacy_el.kb` (which stays a leaf: it imports nothing else of the package) and
may use the corpus readers and metrics: ``eval_kb`` builds the evaluation KB under the data README's
rules (and, from chosen entity and alias sources, the open-data KBs), ``sources`` reads the KB material
(Wikipedia summaries, PPRforNED, DWIE priors), ``data_sources`` names every source with its licence and
``names`` tells the gold mentions that read as names from pronouns.
"""
