"""The coarse PER/LOC/ORG/MISC type of a Wikidata item, from its P31 ("instance of") values.

NER4EL's coarse type inventory (``spacy_el.kb.type_inventory``) maps the KB types "PER", "LOC" and "ORG";
``from-dumps`` stores one of them (or "MISC") beside the P31 QIDs of each entity. The default table maps
the most frequent P31 classes of English Wikipedia entities; it is a starting point, not an ontology:
P31 values are not followed up the P279 (subclass of) hierarchy, which would need the whole dump
in memory. Pass your own table (``--types-map FILE``, JSON ``{"Q5": "PER", ...}``) to change it.
An item none of whose P31 values is in the table is "MISC", as is an item without P31.
"""
import json
from pathlib import Path
from typing import Dict, Mapping, Optional, Sequence, Union

from ..errors import KBErrors

FALLBACK = "MISC"

_PER = {"Q5": "human", "Q15632617": "fictional human", "Q95074": "character (arts)", "Q15773347": "film character"}
_LOC = {
    "Q6256": "country", "Q3624078": "sovereign state", "Q3336843": "country of the United Kingdom",
    "Q7275": "state", "Q35657": "U.S. state", "Q107390": "federated state", "Q10864048": "first-level administrative division",
    "Q515": "city", "Q1549591": "big city", "Q1637706": "city with millions of inhabitants", "Q5119": "capital",
    "Q486972": "human settlement", "Q3957": "town", "Q532": "village", "Q15284": "municipality",
    "Q1093829": "city of the United States", "Q484170": "commune of France", "Q747074": "comune of Italy",
    "Q262166": "municipality of Germany", "Q5107": "continent", "Q82794": "geographic region", "Q1620908": "historical region",
    "Q23442": "island", "Q8502": "mountain", "Q4022": "river", "Q23397": "lake", "Q165": "sea", "Q9430": "ocean",
    "Q46831": "mountain range", "Q2221906": "geographic location", "Q17334923": "location", "Q41176": "building",
    "Q483110": "stadium", "Q1248784": "airport", "Q12280": "bridge", "Q33506": "museum", "Q3914": "school building",
}
_ORG = {
    "Q43229": "organization", "Q4830453": "business", "Q783794": "company", "Q891723": "public company",
    "Q6881511": "enterprise", "Q476028": "association football club", "Q847017": "sports club", "Q12973014": "sports team",
    "Q3918": "university", "Q2385804": "educational institution", "Q7278": "political party", "Q484652": "international organization",
    "Q215380": "musical group", "Q5741069": "rock band", "Q163740": "nonprofit organization", "Q327333": "government agency",
    "Q11032": "newspaper", "Q18127": "record label", "Q4438121": "sports organization", "Q1616075": "television station",
    "Q14350": "radio station", "Q2088357": "musical ensemble", "Q1331793": "media company", "Q210167": "video game developer",
}  # fmt: skip
# Checked in this order: an item that is both a person and something else is a person.
DEFAULT_COARSE_MAP: Dict[str, str] = {
    **{q: "ORG" for q in _ORG}, **{q: "LOC" for q in _LOC}, **{q: "PER" for q in _PER},
}
_PRIORITY = {"PER": 0, "LOC": 1, "ORG": 2, "MISC": 3}


def coarse_type(p31: Sequence[str], table: Mapping[str, str] = DEFAULT_COARSE_MAP) -> str:
    """The coarse label of an item with these P31 values: the mapped label of highest priority
    (PER, LOC, ORG, then any other label in the table), else "MISC"."""
    labels = [table[q] for q in p31 if q in table]
    if not labels:
        return FALLBACK
    return min(labels, key=lambda label: (_PRIORITY.get(label, len(_PRIORITY)), label))


def read_coarse_map(path: Optional[Union[str, Path]]) -> Dict[str, str]:
    """The table in ``path`` (JSON object QID -> label), or the default table when ``path`` is None."""
    if path is None:
        return dict(DEFAULT_COARSE_MAP)
    try:
        table = json.loads(Path(path).read_text(encoding="utf8"))
    except (OSError, ValueError) as err:
        raise ValueError(KBErrors.E308.format(path=path, err=err)) from err
    if not isinstance(table, dict) or not all(isinstance(k, str) and isinstance(v, str) and v for k, v in table.items()):
        raise ValueError(KBErrors.E307.format(path=path))
    return table
