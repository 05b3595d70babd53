"""Alias normalisation: the second lookup tier after an exact match fails."""
import re
import unicodedata

# Apostrophes and periods are deleted rather than turned into spaces so that "U.S." matches "US" and
# "O'Neill" matches "ONeill"; a possessive "'s" is removed before that so "Obama's" matches "Obama".
_POSSESSIVE = re.compile(r"['\u2019]s\b")
_DELETED = re.compile(r"['\u2019.]")
_TO_SPACE = re.compile(r"[\W_]+")
_LEADING_ARTICLE = re.compile(r"^the ")


def normalize_alias(text: str) -> str:
    """Fold case, diacritics, punctuation, a leading "The" and possessives.

    "The Beatles" -> "beatles", "Zürich" -> "zurich", "Obama's" -> "obama", "U.S." -> "us",
    "Lord_Byron" -> "lord byron". Returns "" for text with no word characters.
    """
    if text.isascii():  # NFKD leaves ASCII as it is and it has no combining marks: skip the per-character pass
        text = text.lower()  # casefold() of ASCII
    else:
        text = unicodedata.normalize("NFKD", text)
        text = "".join(c for c in text if not unicodedata.combining(c))
        text = text.casefold()
    text = _POSSESSIVE.sub("", text)
    text = _DELETED.sub("", text)
    text = _TO_SPACE.sub(" ", text).strip()
    return _LEADING_ARTICLE.sub("", text)
