"""``python -m spacy_el kb build|build-eval|info|lookup|attach``."""
from pathlib import Path
from typing import List, Optional

import typer
from wasabi import msg

from ..errors import Errors
from ._app import kb_app

# Options shared by `kb build` and `kb build-eval`.
VECTORS_OPTION = typer.Option(
    None, "--vectors", "-v",
    help="'compute' to encode name + description with --encoder, or a .npy file of shape (n_entities, dim)",
)
INDEX_OPTION = typer.Option(
    None, "--index", "-i", help="FAISS factory string for a dense index over the vectors: Flat, HNSW32, IVF4096,PQ48, ..."
)
ENCODER_OPTION = typer.Option(None, "--encoder", "-e", help="Hugging Face hub name or local model folder (default: packaged MiniLM)")
BATCH_SIZE_OPTION = typer.Option(64, "--batch-size", "-b", help="Encoder batch size")
GPU_ID_OPTION = typer.Option(-1, "--gpu-id", "-g", help="GPU to encode on; -1 for CPU")
VECTORS_WORK_DIR_OPTION = typer.Option(
    None, "--vectors-work-dir",
    help="With --vectors compute: where the encoded chunks go, so that an interrupted run continues where it stopped "
    "(default: OUTPUT_DIR.vectors-work beside the output; removed once the KB is saved)", file_okay=False,
)
VECTORS_CHUNK_SIZE_OPTION = typer.Option(
    50_000, "--vectors-chunk-size", min=1, help="With --vectors compute: entities encoded per chunk file"
)
FORCE_OPTION = typer.Option(
    False, "--force", "-f", help="Write into output_dir even if it is a non-empty directory that is not a spacy_el KB"
)


def check_output_dir(output_dir: Path, force: bool) -> None:
    """Refuse an unusable output directory before the (possibly hours-long) build, not after it."""
    from ..kb.serialization import check_kb_target

    check_kb_target(output_dir, force=force)


def vectors_work_dir(output_dir: Path, work_dir: Optional[Path]) -> Path:
    """The folder of the resumable vector encoding: ``work_dir``, or OUTPUT_DIR.vectors-work beside the output."""
    if work_dir is not None:
        return work_dir
    output_dir = output_dir.resolve()
    return output_dir.with_name(f"{output_dir.name}.vectors-work")


def add_vectors_and_save(
    kb, output_dir: Path, vectors: Optional[str], index: Optional[str], encoder: Optional[str], batch_size: int,
    gpu_id: int, force: bool = False, work_dir: Optional[Path] = None, chunk_size: int = 50_000,
) -> None:
    """The steps after the alias table is built: optional vectors, optional FAISS index, then save.

    Computed vectors are encoded in chunks into ``work_dir`` (default beside the output, see
    ``vectors_work_dir``): run the same command again after an interruption and it continues from the
    finished chunks. The folder is removed once the KB is saved."""
    from ..kb.build_steps import attach_dense_index, attach_vectors
    from ..kb.vector_chunks import remove_work_dir

    resume_dir = vectors_work_dir(output_dir, work_dir) if vectors == "compute" else None
    if vectors is not None:
        if resume_dir is not None:
            msg.info(f"Encoding entity vectors in chunks into {resume_dir}: if interrupted, run the same command again to continue")
        attach_vectors(
            kb, vectors, encoder=encoder or None, batch_size=batch_size, gpu_id=gpu_id, resume_dir=resume_dir,
            chunk_size=chunk_size,
        )
        msg.good(f"Entity vectors: {kb.entities.vector_dim} dimensions")
    if index is not None:
        attach_dense_index(kb, index)
        msg.good(f"Dense index: {index}")
    kb.to_disk(output_dir, force=force)
    msg.good(f"Saved KB to {output_dir}")
    if resume_dir is not None:
        remove_work_dir(resume_dir)


@kb_app.command("build")
def build_cli(
    entities_path: Path = typer.Argument(..., help="Entities JSONL (see README: KB JSONL schema)", exists=True, dir_okay=False),
    aliases_path: Path = typer.Argument(..., help="Aliases JSONL (see README: KB JSONL schema)", exists=True, dir_okay=False),
    output_dir: Path = typer.Argument(..., help="Directory to write the KB to"),
    vectors: Optional[str] = VECTORS_OPTION,
    index: Optional[str] = INDEX_OPTION,
    encoder: Optional[str] = ENCODER_OPTION,
    batch_size: int = BATCH_SIZE_OPTION,
    gpu_id: int = GPU_ID_OPTION,
    vectors_work: Optional[Path] = VECTORS_WORK_DIR_OPTION,
    vectors_chunk_size: int = VECTORS_CHUNK_SIZE_OPTION,
    title_aliases: bool = typer.Option(False, "--title-aliases", help="Also add each entity name as an alias"),
    fuzzy: bool = typer.Option(True, "--fuzzy/--no-fuzzy", help="Build the trigram index for fuzzy lookup"),
    drop_unknown: bool = typer.Option(False, "--drop-unknown", help="Drop (and count) alias candidates naming unknown entities instead of failing"),
    force: bool = FORCE_OPTION,
) -> None:
    """Build a KB from entity and alias JSONL files, optionally with vectors and a FAISS index."""
    from ..kb.builder import KBBuilder

    check_output_dir(output_dir, force)
    builder = KBBuilder.from_jsonl(entities_path, aliases_path)
    if title_aliases:
        builder.add_title_aliases()
    kb = builder.build(fuzzy=fuzzy, drop_unknown=drop_unknown, progress=True)
    if kb.n_aliases == 0:
        # Candidates are found through aliases only: such a KB would link nothing.
        raise ValueError(Errors.E710.format(entities_path=entities_path, aliases_path=aliases_path))
    msg.good(f"Built KB: {kb.n_entities} entities, {kb.n_aliases} aliases")
    add_vectors_and_save(
        kb, output_dir, vectors, index, encoder, batch_size, gpu_id, force, vectors_work, vectors_chunk_size
    )


@kb_app.command("info")
def info_cli(kb_dir: Path = typer.Argument(..., help="KB directory", exists=True, file_okay=False)) -> None:
    """Print a KB's size, settings and memory use."""
    from ..kb import ElKnowledgeBase

    kb = ElKnowledgeBase.load(kb_dir)
    usage = kb.memory_usage()
    rows = [
        ("entities", kb.n_entities),
        ("aliases", kb.n_aliases),
        ("entity vector dim", kb.entities.vector_dim or "none"),
        ("dense index", f"{kb.dense_index.factory} ({kb.dense_index.ntotal})" if kb.dense_index is not None else "none"),
        ("types", len(kb.entities.type_names)),
        ("fuzzy lookup", kb.aliases.fuzzy_index is not None),
        ("top_k", kb.settings.top_k),
        ("array bytes", sum(usage.values())),
    ]
    msg.table(rows, header=("KB", str(kb_dir)), divider=True)
    msg.table(sorted(usage.items()), header=("component", "bytes"), divider=True)


@kb_app.command("lookup")
def lookup_cli(
    alias: str = typer.Argument(..., help="Mention text to look up"),
    kb_dir: Path = typer.Option(Path("kb/demo"), "--kb", "-k", help="KB directory", exists=True, file_okay=False),
    top_k: int = typer.Option(10, "--top-k", "-n", min=1, help="Number of candidates to show (>= 1)"),
) -> None:
    """Show the candidates of a mention: exact, then normalised, then fuzzy match."""
    from ..kb import ElKnowledgeBase

    kb = ElKnowledgeBase.load(kb_dir)
    hits = kb.lookup(alias, top_k=top_k)
    if not hits:
        msg.warn(f"No candidates for {alias!r}")
        return
    rows = []
    for hit in hits:
        info = kb.entity_at(hit.entity_row)
        rows.append((hit.entity_id, f"{hit.prior:.3f}", hit.match, f"{hit.score:.2f}", hit.alias, info.description[:60]))
    msg.table(rows, header=("entity", "prior", "match", "score", "alias", "description"), divider=True)


@kb_app.command("index")
def index_cli(
    kb_dir: Path = typer.Argument(..., help="KB directory with entity vectors", exists=True, file_okay=False),
    index: str = typer.Option(..., "--index", "-i", help="FAISS factory string of the new dense index: Flat, HNSW32, IVF4096,PQ48, ..."),
    ef_construction: int = typer.Option(40, "--ef-construction", help="HNSW: candidate-list size while building (graph quality against build time)"),
    ef_search: int = typer.Option(128, "--ef-search", min=1, help="HNSW: candidate-list size while searching (recall against search time; saved with the index)"),
) -> None:
    """Replace the KB's dense index by one of another kind, built from the vectors the KB already has (its
    entities, aliases, vectors and attachments are kept). HNSW32 searches faster than Flat, at a small
    cost in recall (docs/candidates.md)."""
    from ..kb import ElKnowledgeBase
    from ..kb.build_steps import attach_dense_index

    kb = ElKnowledgeBase.load(kb_dir, mmap=False)
    if kb.entities.vectors is None:
        raise ValueError(Errors.E711.format(kb_dir=kb_dir))
    attach_dense_index(kb, index, ef_construction=ef_construction, ef_search=ef_search)
    kb.to_disk(kb_dir)
    msg.good(f"{kb_dir} now has a {index} index of its {kb.n_entities:,} entity vectors")


@kb_app.command("attach")
def attach_cli(
    pipeline: Path = typer.Argument(..., help="Trained pipeline directory (its components' KBs may be missing)", exists=True, file_okay=False),
    kb_dir: Path = typer.Argument(..., help="KB directory with entity vectors from the encoder the components were trained with", exists=True, file_okay=False),
    output: Path = typer.Argument(..., help="Where to write the pipeline with the KB (an earlier kb attach copy there is replaced; anything else is refused)"),
    component: Optional[List[str]] = typer.Option(None, "--component", "-c", help="Component to give the KB (repeatable; default: every spacy_el component)"),
) -> None:
    """Write a copy of PIPELINE whose spacy_el components carry the KB at KB_DIR: for trained heads shipped
    without a KB (assets/models/joint_coref_linker), or to link against another KB. Refuses a KB whose
    vectors have another width or come from another encoder than the one the components were trained with."""
    from ..package.attach_kb import attach_kb

    names = attach_kb(pipeline, kb_dir, output, component or ())
    msg.good(f"Saved {output}: {', '.join(names)} with the KB {kb_dir}")


@kb_app.command("build-eval")
def build_eval_cli(
    data_dir: Path = typer.Argument(..., help="The shared data directory (../shared/data)", exists=True, file_okay=False),
    output_dir: Path = typer.Argument(..., help="Directory to write the KB to"),
    vectors: Optional[str] = VECTORS_OPTION,
    index: Optional[str] = INDEX_OPTION,
    encoder: Optional[str] = ENCODER_OPTION,
    batch_size: int = BATCH_SIZE_OPTION,
    gpu_id: int = GPU_ID_OPTION,
    vectors_work: Optional[Path] = VECTORS_WORK_DIR_OPTION,
    vectors_chunk_size: int = VECTORS_CHUNK_SIZE_OPTION,
    alias_sources: Optional[str] = typer.Option(
        None, "--alias-sources", "-a",
        help="Comma-separated alias sources (default: all of titles,gum,dwie,aida,pprforned); titles,gum,dwie are "
        "the open-data ones a packaged KB may carry (AIDA and PPRforNED mention strings are Reuters text)",
    ),
    entity_sources: Optional[str] = typer.Option(
        None, "--entity-sources",
        help="Comma-separated entity sources (default: all of summaries,gum,dwie,pprforned,aida, each with the train "
        "gold titles it annotates); summaries,gum give a KB whose entities have no AIDA or PPRforNED origin",
    ),
    entities_from: Optional[Path] = typer.Option(
        None, "--entities-from",
        help="An evaluation KB whose entities, vectors and dense index to keep: only the aliases are built again "
        "(from redistributable --alias-sources), nothing is encoded",
        exists=True, file_okay=False,
    ),
    skip_pronoun_aliases: bool = typer.Option(
        False, "--skip-pronoun-aliases",
        help="Count only the GUM train mentions that read as names: not pronouns or phrases capitalised only by a "
        "leading function word (He, I, The city), which the default rule (an upper-case letter) lets in",
    ),
    force: bool = FORCE_OPTION,
) -> None:
    """Build the evaluation KB from ../shared/data (entities from PPRforNED, Wikipedia summaries, GUM and
    DWIE, or the --entity-sources named; aliases only from titles, AIDA/GUM train mentions, train-split
    PPRforNED lists and DWIE priors, or the --alias-sources named). Its manifest records both sources."""
    from ..corpora import read_aida, read_gum
    from ..recipes.eval_kb import (
        ALIAS_SOURCES, ENTITY_SOURCES, build_eval_kb_builder, check_alias_sources, check_entity_sources,
        open_data_aliases,
    )

    names = check_alias_sources(alias_sources.split(",") if alias_sources else ALIAS_SOURCES)
    entity_names = check_entity_sources(entity_sources.split(",") if entity_sources else ENTITY_SOURCES)
    if entities_from is not None and entity_sources:
        raise ValueError(Errors.E712)
    check_output_dir(output_dir, force)
    # A full build reads GUM train when GUM gives aliases or entities: its gold titles are entities of the KB.
    need_gum = "gum" in names or (entities_from is None and "gum" in entity_names)
    gum_train = read_gum(data_dir / "gum", "train", show_progress=True) if need_gum else []
    if entities_from is not None:
        from ..kb import ElKnowledgeBase

        kb = open_data_aliases(ElKnowledgeBase.load(entities_from, mmap=False), data_dir, gum_train, names,
                               skip_pronoun_aliases=skip_pronoun_aliases)
        msg.good(f"Rebuilt the aliases of {entities_from} from {','.join(names)}: {kb.n_entities} entities, {kb.n_aliases} aliases")
    else:
        need_aida = "aida" in names or "aida" in entity_names
        aida_train = read_aida(data_dir / "aida", splits=("train",), show_progress=True)["train"] if need_aida else []
        builder = build_eval_kb_builder(data_dir, aida_train, gum_train, alias_sources=names, entity_sources=entity_names,
                                        skip_pronoun_aliases=skip_pronoun_aliases)
        kb = builder.build(progress=True, alias_sources=names, entity_sources=entity_names)
        msg.good(f"Built evaluation KB: {kb.n_entities} entities ({','.join(entity_names)}), {kb.n_aliases} aliases "
                 f"({','.join(names)})")
    add_vectors_and_save(
        kb, output_dir, vectors, index, encoder, batch_size, gpu_id, force, vectors_work, vectors_chunk_size
    )
