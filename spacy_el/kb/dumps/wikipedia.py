"""The Wikipedia pages-articles XML dump, streamed: pages out of the XML, then what the KB needs out of
each page (run in worker processes by ``build``).

The reader is namespace-agnostic: elements are matched by local name, so the export schemas 0.3 to
0.11 (``xmlns="http://www.mediawiki.org/xml/export-0.10/"`` and friends) all read the same. It knows the
structure ``mediawiki/siteinfo/namespaces/namespace`` and ``mediawiki/page/{title, ns, id, redirect,
revision/text}``; a root that is not ``mediawiki`` or a page without a title or text is an error naming
the file and line (or skipped and counted with ``skip_bad``).
"""
import xml.etree.ElementTree as ET
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, FrozenSet, Iterator, List, NamedTuple, Optional, Sequence, Tuple, Union

import numpy as np

from ..errors import KBErrors
from .errors import BadInput, DumpFormatError, dump_error
from .streams import ByteStream
from .titles import normalize_title, title_hash
from .wikitext import extract_links, first_paragraph, is_disambiguation, redirect_target

ARTICLE_NAMESPACE = 0


class Page(NamedTuple):
    """One ``<page>``: id, namespace number, title, redirect target (None when not a redirect), wikitext,
    and whether page_props marks it as a disambiguation page."""

    page_id: int
    ns: int
    title: str
    redirect: Optional[str]
    text: str
    disambiguation_prop: bool = False


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


class SiteInfo(NamedTuple):
    namespaces: FrozenSet[str]  # the names of every namespace but the main one ("File", "Category", ...)


def iter_pages(
    path: Union[str, Path], bad: BadInput, *, skip_bad: bool = False, site: Optional[List[SiteInfo]] = None
) -> Iterator[Page]:
    """The pages of an XML dump, in file order. ``site`` (a list) receives the ``SiteInfo`` once read.

    A ``<page>`` anywhere but at ``mediawiki/page`` is an error naming its path (or skipped and counted
    with ``skip_bad``), and a dump that gives no page at all is an error: a build from it would silently
    have no links."""
    return iter_pages_from(ByteStream(path), path, bad, skip_bad=skip_bad, site=site)


def iter_pages_from(
    stream: Any, path: Union[str, Path], bad: BadInput, *, skip_bad: bool = False,
    site: Optional[List[SiteInfo]] = None, require_pages: bool = True,
) -> Iterator[Page]:
    """``iter_pages`` on ``stream`` (``read(n)``, ``position`` and ``close()``, as ``ByteStream``), closed at the
    end; ``path`` names it in messages. ``require_pages``: no page at all is an error (E326)."""
    parser = ET.XMLPullParser(events=("start", "end"))
    root = None
    namespaces: List[str] = []
    open_elements: List[ET.Element] = []  # from the root to the element being read
    n_pages = 0
    misplaced: Counter = Counter()  # path of the <page> elements out of place -> count
    try:
        while True:
            block = stream.read(1 << 20)
            for event, elem in _events(parser, block, path):
                name = _local(elem.tag)
                if event == "start":
                    if root is None:
                        root = elem
                        if name != "mediawiki":
                            raise dump_error(path, "line 1", KBErrors.E313, name=name)
                    elif name == "page" and len(open_elements) != 1:
                        where = "/".join(_local(e.tag) for e in open_elements) + "/page"
                        if not skip_bad:
                            offset = f"decompressed byte offset {stream.position}"
                            raise dump_error(path, offset, KBErrors.E327, reason=MISPLACED_PAGE, element=where)
                        misplaced[where] += 1
                        bad.add(MISPLACED_PAGE, f"{path}, decompressed byte offset {stream.position}: {where}")
                    open_elements.append(elem)
                    continue
                open_elements.pop()
                if name == "namespace" and elem.text and elem.get("key") != "0":
                    namespaces.append(elem.text.strip())
                elif name == "siteinfo" and site is not None:
                    site.append(SiteInfo(frozenset(namespaces)))
                elif name == "page" and len(open_elements) == 1:
                    n_pages += 1
                    page = _page_of(elem, path, stream.position, bad, skip_bad)
                    root.clear()  # the pages read so far: memory stays bounded
                    if page is not None:
                        yield page
                elif name == "page" and open_elements:
                    open_elements[-1].remove(elem)  # a skipped page out of place: its memory goes too
            if not block:
                break
    finally:
        stream.close()
    if root is None:
        raise dump_error(path, None, KBErrors.E314)
    if n_pages == 0 and require_pages:
        found = "".join(f" (found {n} at {where})" for where, n in misplaced.most_common(1))
        raise dump_error(path, None, KBErrors.E326, reason="no pages", found=found)


MISPLACED_PAGE = "<page> out of place"


def _events(parser: ET.XMLPullParser, block: bytes, path: object) -> List[Tuple[str, ET.Element]]:
    """Feed ``block`` (b"": the end) and return the events; a parse error names the file, line and column
    (the pull parser raises it from ``feed``, ``close`` or ``read_events``)."""
    try:
        parser.feed(block) if block else parser.close()
        return list(parser.read_events())
    except ET.ParseError as err:
        line, column = err.position
        raise dump_error(path, f"line {line}, column {column}", KBErrors.E315, err=err) from err


def _page_of(elem: ET.Element, path: object, offset: int, bad: BadInput, skip_bad: bool) -> Optional[Page]:
    fields = {}
    redirect = None
    text = None
    for child in elem:
        name = _local(child.tag)
        if name in ("title", "ns", "id"):
            fields[name] = child.text or ""
        elif name == "redirect":
            redirect = child.get("title")
        elif name == "revision":
            for part in child:
                if _local(part.tag) == "text":
                    text = part.text or ""
    problem = None
    if "title" not in fields or not fields["title"].strip():
        problem = "a <page> without a <title>"
    elif text is None:
        problem = f"page {fields['title']!r} has no <revision><text>"
    else:
        try:
            ns, page_id = int(fields.get("ns", "0") or 0), int(fields.get("id", "0") or 0)
        except ValueError:
            problem = f"page {fields['title']!r} has a non-numeric <ns> or <id>"
    if problem is not None:
        where = f"decompressed byte offset {offset}"
        if not skip_bad:
            raise dump_error(path, where, KBErrors.E316, problem=problem)
        bad.add("malformed page", f"{path}, {where}")
        return None
    return Page(page_id, ns, fields["title"], redirect, text)


# -- per page (in workers) ---------------------------------------------------------------------------
@dataclass
class PageConfig:
    """What the workers need to know. ``wanted_descriptions``: sorted uint64 title hashes of the entities
    that lack a Wikidata description (their first paragraph is extracted), or None for none."""

    namespaces: FrozenSet[str] = frozenset()
    wanted_descriptions: Optional[np.ndarray] = None


@dataclass
class PagesResult:
    """What a chunk of pages gives: redirects, disambiguation titles, link counts, first paragraphs."""

    redirects: List[Tuple[str, str]] = field(default_factory=list)
    disambiguations: List[str] = field(default_factory=list)
    links: Counter = field(default_factory=Counter)  # (anchor, target title) -> count
    descriptions: List[Tuple[str, str]] = field(default_factory=list)  # (title, first paragraph)
    counts: Counter = field(default_factory=Counter)


def process_pages(pages: Sequence[Page], config: PageConfig) -> PagesResult:
    result = PagesResult()
    counts = result.counts
    wanted = config.wanted_descriptions
    for page in pages:
        counts["pages"] += 1
        if page.ns != ARTICLE_NAMESPACE:
            counts["pages in other namespaces"] += 1
            continue
        title = normalize_title(page.title)
        if title is None:
            counts["pages without a title"] += 1
            continue
        target = normalize_title(page.redirect) if page.redirect is not None else redirect_target(page.text)
        if target is not None or page.redirect is not None:
            counts["redirects"] += 1
            if target is not None:
                result.redirects.append((title, target))
            continue
        if page.disambiguation_prop or is_disambiguation(page.text):
            counts["disambiguation pages"] += 1
            result.disambiguations.append(title)
            continue  # their links list meanings, they are no evidence of what an anchor means
        counts["articles"] += 1
        links, skipped = extract_links(page.text, config.namespaces)
        counts["links counted"] += len(links)
        counts["links to other namespaces"] += skipped
        result.links.update(links)
        if wanted is not None and len(wanted):
            h = np.uint64(title_hash(title))
            at = int(np.searchsorted(wanted, h))
            if at < len(wanted) and wanted[at] == h:
                paragraph = first_paragraph(page.text)
                if paragraph:
                    result.descriptions.append((title, paragraph))
    return result


def check_is_xml(path: Union[str, Path]) -> None:
    """Fail early, before hours of Wikidata reading, if ``path`` is not an XML dump."""
    stream = ByteStream(path)
    try:
        head = stream.read(256).lstrip()
    finally:
        stream.close()
    if not head.startswith(b"<"):
        raise DumpFormatError(KBErrors.E305.format(path=path, start=head[:20]))
