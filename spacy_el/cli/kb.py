"""``python -m spacy_el kb build|build-eval|info|lookup``."""
from pathlib import Path
from typing import Optional

import typer
from wasabi import msg

from ._app import kb_app

# Options shared by `kb build` and `kb build-eval`.
VECTORS_OPTION = typer.Option(
    None, "--vectors", "-v",
    help="'compute' to encode name + description with --encoder, or a .npy file of shape (n_entities, dim)",
)
INDEX_OPTION = typer.Option(
    None, "--index", "-i", help="FAISS factory string for a dense index over the vectors: Flat, HNSW32, IVF4096,PQ48, ..."
)
ENCODER_OPTION = typer.Option(None, "--encoder", "-e", help="Local Hugging Face model path (default: packaged MiniLM)")
BATCH_SIZE_OPTION = typer.Option(64, "--batch-size", "-b", help="Encoder batch size")
GPU_ID_OPTION = typer.Option(-1, "--gpu-id", "-g", help="GPU to encode on; -1 for CPU")
FORCE_OPTION = typer.Option(
    False, "--force", "-f", help="Write into output_dir even if it is a non-empty directory that is not a spacy_el KB"
)


def check_output_dir(output_dir: Path, force: bool) -> None:
    """Refuse an unusable output directory before the (possibly hours-long) build, not after it."""
    from ..kb.serialization import check_kb_target

    check_kb_target(output_dir, force=force)


def add_vectors_and_save(
    kb, output_dir: Path, vectors: Optional[str], index: Optional[str], encoder: Optional[str], batch_size: int,
    gpu_id: int, force: bool = False,
) -> None:
    """The steps after the alias table is built: optional vectors, optional FAISS index, then save."""
    from ..kb.build_steps import attach_dense_index, attach_vectors

    if vectors is not None:
        attach_vectors(kb, vectors, encoder=encoder or None, batch_size=batch_size, gpu_id=gpu_id)
        msg.good(f"Entity vectors: {kb.entities.vector_dim} dimensions")
    if index is not None:
        attach_dense_index(kb, index)
        msg.good(f"Dense index: {index}")
    kb.to_disk(output_dir, force=force)
    msg.good(f"Saved KB to {output_dir}")


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
        raise ValueError(
            f"[spacy_el] The KB built from {entities_path} and {aliases_path} has no aliases, so no mention would "
            f"get a candidate: add aliases to {aliases_path}, or pass --title-aliases to use the entity names."
        )
    msg.good(f"Built KB: {kb.n_entities} entities, {kb.n_aliases} aliases")
    add_vectors_and_save(kb, output_dir, vectors, index, encoder, batch_size, gpu_id, force)


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


@kb_app.command("build-eval")
def build_eval_cli(
    data_dir: Path = typer.Argument(..., help="The shared data directory (../shared/data)", exists=True, file_okay=False),
    output_dir: Path = typer.Argument(..., help="Directory to write the KB to"),
    vectors: Optional[str] = VECTORS_OPTION,
    index: Optional[str] = INDEX_OPTION,
    encoder: Optional[str] = ENCODER_OPTION,
    batch_size: int = BATCH_SIZE_OPTION,
    gpu_id: int = GPU_ID_OPTION,
    force: bool = FORCE_OPTION,
) -> None:
    """Build the evaluation KB from ../shared/data (entities from PPRforNED, Wikipedia summaries, GUM and
    DWIE; aliases only from titles, AIDA/GUM train mentions, train-split PPRforNED lists and DWIE priors)."""
    from ..corpora import read_aida, read_gum
    from ..recipes.eval_kb import build_eval_kb_builder

    check_output_dir(output_dir, force)
    aida_train = read_aida(data_dir / "aida", splits=("train",), show_progress=True)["train"]
    gum_train = read_gum(data_dir / "gum", "train", show_progress=True)
    builder = build_eval_kb_builder(data_dir, aida_train, gum_train)
    kb = builder.build(progress=True)
    msg.good(f"Built evaluation KB: {kb.n_entities} entities, {kb.n_aliases} aliases")
    add_vectors_and_save(kb, output_dir, vectors, index, encoder, batch_size, gpu_id, force)
