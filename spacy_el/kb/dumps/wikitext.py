"""What the KB needs from an article's wikitext: its links, whether it is a disambiguation page, and its
first paragraph.

Parser choice (``docs/kb_dumps.md``): templates and the first paragraph go through mwparserfromhell
(maintained, on PyPI, the parser the Wikimedia tools use); links are found by one regular expression
over the text. mwparserfromhell builds a full node tree, which is ~100x slower than the scan on whole
articles (measured in the docs), and a ``[[target|anchor]]`` link has no nesting to parse apart from
file captions, whose inner links the scan finds just the same. mwparserfromhell is therefore run only
where its tree is needed: on the lead section of the articles whose description is wanted, and on the
pages whose text mentions a disambiguation template name at all (a substring test filters the rest).
"""
import re
from typing import Any, FrozenSet, List, Optional, Tuple

from ..errors import KBErrors
from .titles import clean_anchor, normalize_title

# Template names (first letter case-insensitive, "_" = " ") that mark a disambiguation page on the English
# Wikipedia: {{Disambiguation}} and its redirects and specialised variants. Aliases are listed by
# Template:Disambiguation's "What links here" (redirects) and Category:Disambiguation message boxes.
DISAMBIGUATION_TEMPLATES: FrozenSet[str] = frozenset({
    "disambiguation", "disambig", "disamb", "dab", "dis", "disam", "disambiguation page",
    "hndis", "hndab", "human name disambiguation", "geodis", "geo-dis", "geographic disambiguation",
    "numberdis", "number disambiguation", "letter-number combination disambiguation", "lnc dab",
    "mil-unit-dis", "military unit disambiguation", "school disambiguation", "schooldis",
    "hospital disambiguation", "hospitaldis", "road disambiguation", "roaddis", "mathdab",
    "mathematical disambiguation", "species latin name disambiguation", "genus disambiguation",
    "call sign disambiguation", "chinese title disambiguation", "disambiguation cleanup", "dab cleanup",
    "disambig-cleanup", "set index article",
})  # fmt: skip


def _hint_pattern(names: FrozenSet[str]) -> "re.Pattern[str]":
    """"{{" + one of ``names`` + "|" or "}}": a fast pre-filter, so that mwparserfromhell parses only the
    pages that may carry such a template (the parser then decides, nested templates included)."""
    alternatives = "|".join(sorted((re.escape(n).replace("\\ ", " ").replace(" ", "[ _]+") for n in names), key=len, reverse=True))
    return re.compile(r"\{\{\s*(?:" + alternatives + r")\s*(?:\||\}\})", re.I)


_DISAMBIGUATION_HINT = _hint_pattern(DISAMBIGUATION_TEMPLATES)

# [[target]] or [[target|anchor]], innermost: neither part contains brackets, so the links inside a file
# caption are found and the file link around them is not.
LINK = re.compile(r"\[\[([^\[\]|\n]+)(?:\|([^\[\]]*))?\]\]")
_COMMENT = re.compile(r"<!--.*?-->", re.S)
# Interlanguage and interwiki prefixes are lower case ("fr:", "wikt:", "zh-min-nan:"); page titles are not.
_INTERWIKI = re.compile(r"^[a-z][a-z-]{1,15}$")
# Namespace prefixes that are not in the siteinfo list but still name other namespaces.
NAMESPACE_ALIASES = frozenset({"Image", "Media", "Special", "WP", "Project", "WT", "CAT", "H", "MOS", "P", "T", "Wikt", "W"})


def _mwparser() -> Any:
    try:
        import mwparserfromhell
    except ImportError as err:
        raise ImportError(KBErrors.E306) from err
    return mwparserfromhell


def extract_links(text: str, namespaces: FrozenSet[str]) -> Tuple[List[Tuple[str, str]], int]:
    """(anchor, normalised target title) of every article link in ``text``, and the number of links
    skipped as pointing to another namespace or wiki (files, categories, interlanguage links, ...).

    ``[[Paris#History|the city]]`` gives ("the city", "Paris"); ``[[paris]]`` gives ("paris", "Paris"):
    the anchor is the text as shown, the target the page it names. A link trail (``[[bus]]es``) is
    not part of the anchor.
    """
    if "<!--" in text:
        text = _COMMENT.sub("", text)
    links: List[Tuple[str, str]] = []
    skipped = 0
    for match in LINK.finditer(text):
        target_raw, anchor_raw = match.group(1), match.group(2)
        target_text = target_raw.strip()
        if target_text.startswith(":"):  # [[:Category:X]] links to the category page itself
            target_text = target_text[1:].lstrip()
        if ":" in target_text and _other_namespace(target_text, namespaces):
            skipped += 1
            continue
        title = normalize_title(target_text)
        if title is None:  # [[#Section]]: a link within the page
            continue
        if anchor_raw is None:
            anchor = clean_anchor(target_text.split("#", 1)[0].replace("_", " "))
        else:
            anchor = clean_anchor(anchor_raw)
        if anchor:  # the "pipe trick" [[Target|]] has no anchor of its own
            links.append((anchor, title))
    return links, skipped


def _other_namespace(target: str, namespaces: FrozenSet[str]) -> bool:
    prefix = target.split(":", 1)[0].strip()
    if _INTERWIKI.match(prefix):
        return True
    canonical = normalize_title(prefix)
    return canonical is not None and (canonical in namespaces or canonical in NAMESPACE_ALIASES)


def template_name(raw: str) -> str:
    """A template's name as compared with ``DISAMBIGUATION_TEMPLATES``: lower case, "_" as " "."""
    return " ".join(raw.replace("_", " ").split()).lower()


def is_disambiguation(text: str, templates: FrozenSet[str] = DISAMBIGUATION_TEMPLATES) -> bool:
    """Whether the page carries a disambiguation template (at any nesting depth)."""
    hint = _DISAMBIGUATION_HINT if templates is DISAMBIGUATION_TEMPLATES else _hint_pattern(templates)
    if "{{" not in text or not hint.search(text):
        return False
    code = _mwparser().parse(text, skip_style_tags=True)
    return any(template_name(str(t.name)) in templates for t in code.ifilter_templates(recursive=True))


_HEADING = re.compile(r"^=.*=\s*$", re.M)


def first_paragraph(text: str, max_chars: int = 1000) -> str:
    """The first paragraph of prose of the article's lead section, markup removed ("" when none).

    Templates (infoboxes, hatnotes), tags (references) and file and category links are dropped,
    links are replaced by their anchors (mwparserfromhell's ``strip_code``).
    """
    heading = _HEADING.search(text)
    lead = text[: heading.start()] if heading else text
    if "<!--" in lead:
        lead = _COMMENT.sub("", lead)
    mw = _mwparser()
    code = mw.parse(lead, skip_style_tags=True)
    for node in list(code.ifilter(recursive=False, forcetype=(mw.nodes.Template, mw.nodes.Tag))):
        try:
            code.remove(node)
        except ValueError:  # already gone with an enclosing node
            pass
    for link in list(code.ifilter_wikilinks(recursive=False)):
        if ":" in str(link.title):  # File:, Image:, Category: and interwiki links are not prose
            try:
                code.remove(link)
            except ValueError:
                pass
    plain = code.strip_code(normalize=True, collapse=True)
    for paragraph in re.split(r"\n\s*\n|\n", plain):
        paragraph = " ".join(paragraph.replace("'''", "").replace("''", "").split())
        if len(paragraph) >= 20 or (paragraph and paragraph[-1] in ".!?"):
            return paragraph[:max_chars]
    return ""


def redirect_target(text: str) -> Optional[str]:
    """The target of a ``#REDIRECT [[Target]]`` text (older dumps have no ``<redirect>`` element)."""
    head = text.lstrip()[:512]
    if not head[:9].upper().startswith("#REDIRECT"):
        return None
    match = LINK.search(head)
    return normalize_title(match.group(1)) if match else None
