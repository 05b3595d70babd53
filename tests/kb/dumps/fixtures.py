"""Small hand-written dumps with every edge case the KB build must handle, and the figures expected
from them, counted by hand (see the comments)."""
from pathlib import Path
from typing import Tuple

from .conftest import item, page_xml, wikidata_bytes, wikipedia_bytes, write_bz2

WIKIDATA = [
    item("Q90", "Paris", "Paris", ["Q515"], "capital of France", ["City of Light"]),
    item("Q830", "Paris Hilton", "Paris Hilton", ["Q5"]),  # no description: the first paragraph is used
    item("Q16", "Paris", "Paris, Texas", ["Q1093829"], "city in Texas"),
    item("Q20", "Paris", "Paris (disambiguation)", [], "Wikimedia page"),  # a dab page by its template only
    item("Q9", "iPod", "iPod", ["Q1"], "portable media player"),  # lower-case first letter
    item("Q1000", "Nowhere", None, ["Q515"]),  # no enwiki sitelink: filtered
]

PAGES = [
    page_xml("Paris", "'''Paris''' is the capital of [[France]]. See [[Paris Hilton|Paris]].", 1),
    page_xml(
        "Travel", "[[Paris]] and [[Paris]] and [[Paris#History|Paris]], [[Paris, Texas|Paris]], "
        "[[paris Hilton|Paris]], [[Lumiere|the lights]], [[City of Light]], [[Loop A|loop]], [[IPod|iPod]], "
        "[[iPod]], [[File:P.jpg|thumb|[[Paris]] at night]], [[Category:Travel]]", 2,
    ),
    page_xml("City of Light", "#REDIRECT [[Paris]]", 3, redirect="Paris"),
    page_xml("Lumiere", "#REDIRECT [[City of Light]]", 4, redirect="City of Light"),  # a chain
    page_xml("Loop A", "#REDIRECT [[Loop B]]", 5, redirect="Loop B"),  # a cycle
    page_xml("Loop B", "#REDIRECT [[Loop A]]", 6, redirect="Loop A"),
    page_xml("Paris (disambiguation)", "'''Paris''' may be:\n* [[Paris]]\n* [[Paris Hilton]]\n{{Disambiguation|geo}}", 7),
    page_xml(
        "Paris Hilton", "{{Infobox person|name=Paris Hilton}}\n'''Paris Whitney Hilton''' is an American "
        "[[media personality]].<ref>x</ref>\n\nShe was born in [[New York City]].", 8,
    ),
    page_xml("File:P.jpg", "[[Paris]] photo", 9, ns=6),
]

# Links to KB entities, by hand (the disambiguation page and the File page do not count):
#   "Paris"       -> Paris 3 (2 x [[Paris]], [[Paris#History|Paris]]) + 1 (File caption) = 4,
#                    Paris Hilton 2 ([[Paris Hilton|Paris]], [[paris Hilton|Paris]]), Paris, Texas 1: total 7
#   "the lights"  -> Paris 1 (Lumiere -> City of Light -> Paris), "City of Light" -> Paris 1 (a redirect)
#   "loop"        -> a redirect cycle, "iPod" -> IPod 2, "France" -> not an entity
PARIS_PRIORS = {"Paris": 4 / 7, "Paris_Hilton": 2 / 7, "Paris,_Texas": 1 / 7}
FREQUENCIES = {"Paris": 6.0, "Paris_Hilton": 2.0, "Paris,_Texas": 1.0, "IPod": 2.0}


def write_fixture_dumps(directory: Path) -> Tuple[Path, Path]:
    wikidata = write_bz2(directory / "wikidata.json.bz2", wikidata_bytes(WIKIDATA))
    wikipedia = write_bz2(directory / "enwiki.xml.bz2", wikipedia_bytes(PAGES))
    return wikidata, wikipedia
