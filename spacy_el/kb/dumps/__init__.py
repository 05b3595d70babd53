"""Building a KB from the Wikidata JSON dump and the Wikipedia pages-articles XML dump, streamed from
their compressed files in bounded memory (``python -m spacy_el kb from-dumps``, ``docs/kb_dumps.md``).

A leaf like the rest of ``spacy_el.kb``: it imports nothing of spacy_el outside ``kb/``.

- ``streams``: bz2 / gzip / plain readers with decompression errors located (file, line, byte offset);
- ``wikidata``: entity lines -> filtered items (QID, enwiki title, label, description, aliases, P31);
- ``wikipedia`` + ``wikitext``: XML pages -> redirects, disambiguation pages, links, first paragraphs;
- ``page_props``: the ``disambiguation`` page property from the SQL dump;
- ``runs``: (alias, target) counts in sorted run files with a k-way merge; ``redirects``: hash arrays;
- ``build``: the three passes and the KB assembly, with a report of every count.
"""
from .build import BuildReport, DumpsSettings, build_kb_from_dumps
from .errors import DumpFormatError

__all__ = ["BuildReport", "DumpsSettings", "DumpFormatError", "build_kb_from_dumps"]
