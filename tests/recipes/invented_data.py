"""A tiny invented stand-in for ``../shared/data``'s KB material and gold train docs, shared by the recipe tests
and the package test (all names are invented)."""
import gzip
import io
import json
import tarfile
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

from spacy.tokens import Doc, Span
from spacy.vocab import Vocab

from spacy_el.kb import ElKnowledgeBase
from spacy_el.recipes.data_sources import OPEN_ALIAS_SOURCES, OPEN_ENTITY_SOURCES
from spacy_el.recipes.eval_kb import build_eval_kb_builder

#: The invented DWIE alias priors (alias -> [[title, prior], ...]) of :func:`invented_data_dir`.
DWIE = {"Velda": [["Velda", 1.0]]}


def ppr_tar(path: Path, docs: Dict[str, str]) -> Path:
    """A PPRforNED-like ``AIDA_candidates.tar.gz`` at ``path``: document number -> file text."""
    with tarfile.open(path, "w:gz") as tar:
        for name, text in docs.items():
            data = text.encode("utf8")
            info = tarfile.TarInfo(f"AIDA_candidates/PART_1_1000/{name}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def ppr_candidate(title: str, in_count: int) -> str:
    """One PPRforNED CANDIDATE line."""
    return f"CANDIDATE\tid:1\tinCount:{in_count}\turl:http://en.wikipedia.org/wiki/{title}\tname:{title}\tpredictedType:PER\n"


def invented_data_dir(tmp_path: Path, dwie: Optional[Dict[str, List[List]]] = None) -> Path:
    """A tiny stand-in for ../shared/data: one summary, one PPRforNED train list, the ``dwie`` aliases (default
    ``DWIE``), one GUM title with its QID."""
    kb = tmp_path / "kb"
    (kb / "pprforned").mkdir(parents=True)
    summary = {"title": "Ada Mercer", "extract": "An invented painter.", "description": "Invented painter", "topic": "People"}
    with gzip.open(kb / "summaries_en-us.json.gz", "wt", encoding="utf8") as f:
        json.dump({"Ada Mercer": summary}, f)
    ppr_tar(kb / "pprforned" / "AIDA_candidates.tar.gz",
            {"5": "ENTITY\ttext:Merc\turl:x\n" + ppr_candidate("Mercer_(town)", 3) + ppr_candidate("Ada_Mercer", 1)})
    with gzip.open(kb / "dwie_aliases.jsonl.gz", "wt", encoding="utf8") as f:
        for alias, candidates in (DWIE if dwie is None else dwie).items():
            f.write(json.dumps({"alias": alias, "candidates": candidates}) + "\n")
    (tmp_path / "gum" / "coref").mkdir(parents=True)
    (tmp_path / "gum" / "coref" / "wiki_map.tab").write_text("Lumen_(band)\tLumen_(band)\tQ1\t2020\n", encoding="utf8")
    return tmp_path


def gold_docs() -> Tuple[List[Doc], List[Doc]]:
    """(AIDA-like train docs, GUM-like train docs) with invented linked mentions."""
    aida = Doc(Vocab(), words=["Merc", "met", "Quill", "Tobin", "."])
    aida.ents = [Span(aida, 0, 1, "ORG", kb_id="Mercer_(town)"), Span(aida, 2, 4, "PER", kb_id="Quill_Tobin")]
    gum = Doc(Vocab(), words=["Lumen", "played", "in", "Velda"])
    gum.spans["mentions"] = [Span(gum, 0, 1, "organization", kb_id="Lumen_(band)")]
    return [aida], [gum]


def alias_dict(kb) -> Dict[str, Dict[str, float]]:
    """alias -> {entity id: prior} of a KB's alias table."""
    out = {}
    for row in range(kb.n_aliases):
        entity_rows, priors = kb.aliases.candidates_of(row)
        out[kb.aliases.aliases[row]] = {kb.entities.ids[int(e)]: round(float(p), 6) for e, p in zip(entity_rows, priors)}
    return out


def build_open_kb(
    data_dir: Path, gum_train: List[Doc], aida_train: Sequence[Doc] = (), skip_pronoun_aliases: bool = True,
) -> ElKnowledgeBase:
    """The KB recipe of the `pretrained` pipelines (``kb build-eval --entity-sources summaries,gum --alias-sources
    titles,gum,dwie --skip-pronoun-aliases``) over ``data_dir`` (see :func:`invented_data_dir`) and these gold docs;
    ``aida_train`` is given to show that it is not used."""
    builder = build_eval_kb_builder(data_dir, list(aida_train), gum_train, progress=False, alias_sources=OPEN_ALIAS_SOURCES,
                                    entity_sources=OPEN_ENTITY_SOURCES, skip_pronoun_aliases=skip_pronoun_aliases)
    return builder.build(alias_sources=OPEN_ALIAS_SOURCES, entity_sources=OPEN_ENTITY_SOURCES)
