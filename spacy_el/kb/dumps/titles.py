"""Wikipedia title conventions: normalisation of link targets, KB ids, 64-bit title hashes.

MediaWiki stores titles with spaces, the first letter upper-cased (``$wgCapitalLinks``, the
``first-letter`` case of namespace 0 in the dump's siteinfo) and underscores read as spaces, so
``[[paris#History|...]]``, ``[[Paris]]`` and ``[[ Paris ]]`` all name the page "Paris". KB ids are the
same titles in URL form (underscores), as ``DEVELOPERS.md`` says.
"""
import html
import re
from typing import Iterable, Optional

import numpy as np
from spacy.strings import hash_string

_SPACES = re.compile(r"[\s_\u00a0]+")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def normalize_title(raw: str) -> Optional[str]:
    """The canonical page title a link target names, or None when nothing is left.

    HTML entities are decoded, the section (``#...``) dropped, underscores and runs of white space become
    one space, and the first letter is upper-cased. Percent-encoding is left alone: links rarely use it.
    """
    text = raw.split("#", 1)[0] if "#" in raw else raw
    if "&" in text:
        text = html.unescape(text)
    text = _SPACES.sub(" ", text).strip()
    if not text:
        return None
    return text[0].upper() + text[1:] if text[0].islower() else text


def title_to_kb_id(title: str) -> str:
    """"Lord Byron" -> "Lord_Byron": KB ids are titles in URL form."""
    return title.replace(" ", "_")


def clean_anchor(text: str) -> str:
    """An anchor text as an alias: bold/italic quotes removed, white space collapsed, control characters
    dropped (the run files use tab and newline as separators)."""
    if "''" in text:
        text = text.replace("'''", "").replace("''", "")
    if "&" in text:
        text = html.unescape(text)
    text = _CONTROL.sub(" ", text)
    return " ".join(text.split())


def title_hash(title: str) -> int:
    """64-bit MurmurHash of a canonical title (spaCy's ``hash_string``, as the KB's own indices use)."""
    return hash_string(title)


def title_hashes(titles: Iterable[str]) -> np.ndarray:
    return np.fromiter((hash_string(t) for t in titles), dtype=np.uint64)
