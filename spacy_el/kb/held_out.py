"""What each training document contributed to the alias counts, carried in the KB for held-out priors.

A KB whose aliases are counted from a training corpus (the evaluation KB counts AIDA and GUM train) can
carry, per counted document, the alias counts that document added: alias -> {entity id: count}, in the
units of the alias table's counts (:mod:`spacy_el.kb.alias_table`). A linker trained on that corpus takes
its document's share out of the priors (``ElKnowledgeBase.lookup(held_out=)``), so that it trains on
priors as they are for an uncounted document. Documents are keyed by a digest of their text, so the table
holds no text, and a document the KB did not count has no entry.

The table travels as the KB attachment :data:`HELD_OUT_ATTACHMENT`: UTF-8 JSON, never pickled.
"""
import hashlib
import json
from typing import Dict, Mapping, Optional

from .errors import KBErrors
from .serialization import check_format_header

HELD_OUT_ATTACHMENT = "held_out_counts"
FORMAT = "spacy_el.held_out_counts"
FORMAT_VERSION = 1

#: document key -> alias -> {entity id: count}
HeldOutTable = Dict[str, Dict[str, Dict[str, float]]]


def document_key(text: str) -> str:
    """The key of a document in the table: a 128-bit BLAKE2b digest of its text, in hex."""
    return hashlib.blake2b(text.encode("utf8"), digest_size=16).hexdigest()


def encode_held_out(table: Mapping[str, Mapping[str, Mapping[str, float]]]) -> bytes:
    """The attachment bytes of ``table`` (document key -> alias -> {entity id: count})."""
    documents = {key: {alias: {e: float(c) for e, c in sorted(counts.items())} for alias, counts in sorted(aliases.items())}
                 for key, aliases in sorted(table.items())}
    return json.dumps({"format": FORMAT, "format_version": FORMAT_VERSION, "documents": documents},
                      ensure_ascii=False, separators=(",", ":")).encode("utf8")


def decode_held_out(data: bytes, where: str = "the KB") -> HeldOutTable:
    """The table in ``data`` (:func:`encode_held_out`'s bytes), checked: a clear error for anything else."""
    try:
        parsed = json.loads(data.decode("utf8"))
    except (UnicodeDecodeError, ValueError) as err:
        raise ValueError(KBErrors.E173.format(where=where, err=err)) from err
    check_format_header(parsed, FORMAT, FORMAT_VERSION, "a held-out counts table",
                        f"The {HELD_OUT_ATTACHMENT} attachment of {where}")
    documents = parsed.get("documents")
    if not isinstance(documents, dict) or not all(
        isinstance(aliases, dict) and all(
            isinstance(counts, dict) and all(isinstance(c, (int, float)) and c >= 0 for c in counts.values())
            for counts in aliases.values())
        for aliases in documents.values()
    ):
        raise ValueError(KBErrors.E172.format(where=where))
    return documents


def counts_of(table: HeldOutTable, text: str) -> Optional[Dict[str, Dict[str, float]]]:
    """What the document with ``text`` contributed (None: the KB did not count it)."""
    return table.get(document_key(text))


__all__ = ["HELD_OUT_ATTACHMENT", "HeldOutTable", "document_key", "encode_held_out", "decode_held_out", "counts_of"]
