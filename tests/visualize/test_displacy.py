"""displaCy rendering of links and clusters (spacy_el.visualize) and ``python -m spacy_el visualize``."""
import shutil
import subprocess
from html.parser import HTMLParser
from typing import Dict, List, Tuple

import pytest
import spacy
from spacy.tokens import Span
from typer.testing import CliRunner

from spacy_el.cli import app
from spacy_el.extensions import set_clusters
from spacy_el.visualize import render, save_html
from spacy_el.visualize.displacy import PALETTE

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


class Collect(HTMLParser):
    """Links (href, text), label titles and background colours of a rendered page."""

    def __init__(self) -> None:
        super().__init__()
        self.links: List[Tuple[str, str]] = []
        self.titles: List[str] = []
        self.backgrounds: List[str] = []
        self._href = None

    def handle_starttag(self, tag: str, attrs) -> None:
        attrs: Dict[str, str] = dict(attrs)
        if tag == "a":
            self._href = attrs.get("href")
        if "title" in attrs:
            self.titles.append(attrs["title"])
        style = attrs.get("style") or ""
        if "background:" in style:
            self.backgrounds.append(style.split("background:")[1].split(";")[0].strip())

    def handle_data(self, data: str) -> None:
        if self._href is not None and data.strip():
            self.links.append((self._href, data.strip()))
            self._href = None


def invented_doc():
    nlp = spacy.blank("en")
    doc = nlp("Velda met Orlan Mercer in Lumen . He liked <Lumen> .")
    set_clusters(doc, [[(2, 4), (7, 8)], [(5, 6), (9, 12)]])
    doc.spans["coref_clusters_1"] = [Span(doc, 2, 4, kb_id="Orlan_Mercer"), Span(doc, 7, 8, kb_id="Orlan_Mercer")]
    doc.spans["coref_clusters_2"] = [Span(doc, 5, 6, kb_id="NIL"), Span(doc, 9, 12, kb_id="NIL")]
    mercer = doc.spans["coref_clusters_1"][0]
    mercer._.candidate_scores = [["Orlan_Mercer", 0.9], ["Mercer_<&>_Co", 0.1]]
    mercer._.link_score = 0.9
    doc.spans["coref_clusters_2"][0]._.nil_reason = "no_candidates"
    doc.ents = [Span(doc, 0, 1, "PER", kb_id="Velda")]
    return nlp, doc


def parse(html: str) -> Collect:
    collect = Collect()
    collect.feed(html)
    return collect


def test_links_clusters_nil_and_hover_are_drawn():
    _, doc = invented_doc()
    page = parse(render(doc))
    assert ("https://en.wikipedia.org/wiki/Orlan_Mercer", "Orlan_Mercer") in page.links
    assert ("https://en.wikipedia.org/wiki/Velda", "Velda") in page.links
    assert not any("NIL" in href for href, _ in page.links), "NIL is marked, never linked"
    assert PALETTE[0] in page.backgrounds and PALETTE[1] in page.backgrounds  # one colour per cluster
    hover = next(t for t in page.titles if "candidate Orlan_Mercer" in t)
    assert "candidate Mercer_<&>_Co: 0.100" in hover and "link score: 0.900" in hover  # unescaped by the parser
    assert any("NIL reason: no_candidates" in t for t in page.titles)
    html = render(doc)
    assert "C2 NIL" in html and "&lt;" in html and "<Lumen" not in html


def test_fragment_empty_and_custom_url(tmp_path):
    nlp, doc = invented_doc()
    fragment = render([doc, nlp("")], page=False, kb_url_template="https://kb.example/{}")
    assert "<html" not in fragment and "https://kb.example/Orlan_Mercer" in fragment
    assert "<html" in render([])
    path = save_html([doc], tmp_path / "out" / "doc.html")
    assert path.exists() and "Orlan_Mercer" in path.read_text(encoding="utf8")


def test_cli_runs_a_pipeline_and_writes_html(tmp_path):
    nlp = spacy.blank("en")
    nlp.add_pipe("entity_ruler").add_patterns([{"label": "PER", "pattern": "Velda"}])
    nlp.to_disk(tmp_path / "pipeline")
    texts = tmp_path / "texts.txt"
    texts.write_text("Velda met Orlan.\n\nOrlan met Velda.\n", encoding="utf8")
    out = tmp_path / "viz.html"
    result = CliRunner().invoke(app, ["visualize", str(tmp_path / "pipeline"), str(texts), str(out)])
    assert result.exit_code == 0, result.output
    html = out.read_text(encoding="utf8")
    assert html.count("<figure") == 2 and html.count('<span title="link: (none)">PER</span>') == 2
    again = CliRunner().invoke(app, ["visualize", str(tmp_path / "pipeline"), str(texts), str(out)])
    assert "Wrote" in result.output and "Replaced" in again.output and "Wrote" not in again.output
    bad = CliRunner().invoke(app, ["visualize", str(tmp_path / "pipeline"), str(texts), str(out), "--kb-url-template", "x"])
    assert bad.exit_code == 1 and "E741" in bad.output


@pytest.mark.skipif(CHROMIUM is None, reason="headless Chromium (Debian package `chromium`) is not installed")
def test_chromium_renders_the_links_and_clusters(tmp_path):
    """The page as a browser builds it: Chromium's DOM after loading has the links, cluster labels and hovers."""
    _, doc = invented_doc()
    path = save_html([doc], tmp_path / "doc.html")
    result = subprocess.run(
        [CHROMIUM, "--headless=new", "--no-sandbox", "--disable-gpu", "--dump-dom", path.resolve().as_uri()],
        capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    page = parse(result.stdout)
    assert ("https://en.wikipedia.org/wiki/Orlan_Mercer", "Orlan_Mercer") in page.links
    assert PALETTE[0] in page.backgrounds and PALETTE[1] in page.backgrounds
    assert any("candidate Orlan_Mercer" in t for t in page.titles)
    assert "C2 NIL" in result.stdout
