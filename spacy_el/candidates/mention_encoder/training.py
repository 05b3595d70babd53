"""Training the mention encoder against the KB's fixed entity vectors (BLINK's bi-encoder, first stage).

Each step scores a batch of mentions against the gold entities of the whole batch (in-batch negatives)
and against hard negatives mined from the KB's dense index with the encoder itself: the nearest
entities that are not the gold. The mining is redone at the start of every epoch, with the encoder as
it is then. Loss: cross-entropy of the gold among those entities, on cosine similarities divided by a
temperature.

The entity side is the KB's vectors and stays fixed, so hard negatives cost one extra row each and the
KB is never re-encoded. Only training data is read (data rule 3): the caller passes the training
splits' gold mentions.

Resumable at epoch granularity: after every epoch the encoder, the optimizer state, the epoch and the
best dev score are saved (``state/``), and ``resume=True`` continues from there.
"""
import json
import random
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np
import torch

from ...kb.files import moved_aside, new_dir, remove_temps, write_json
from ...ml.autocast import encoder_autocast
from .inputs import Mention, mention_batch
from .runtime import MentionEncoder

#: A training example: a mention and the KB row of its gold entity.
Example = Tuple[Mention, int]
STATE_DIR = "state"
BEST_DIR = "best"


@dataclass
class TrainingSettings:
    """epochs: passes over the examples. batch_size: mentions per step. hard_negatives: mined per mention.
    lr: transformer learning rate (the projection learns ``head_lr_scale`` times faster). temperature:
    softmax temperature on cosine similarities. seed: shuffling and initialisation."""

    epochs: int = 3
    batch_size: int = 32
    hard_negatives: int = 8
    lr: float = 2e-5
    head_lr_scale: float = 50.0
    temperature: float = 0.05
    seed: int = 0
    max_steps: int = 0  # 0: no limit (smoke runs set it)


def doc_chunks(examples: Sequence[Example], chunk: int) -> List[List[int]]:
    """Example indices in runs of up to ``chunk`` consecutive mentions of one document, so that a batch's
    mentions share context windows (and their encoder passes)."""
    chunks: List[List[int]] = []
    for i, ((doc, _, _), _) in enumerate(examples):
        if chunks and len(chunks[-1]) < chunk and examples[chunks[-1][-1]][0][0] is doc:
            chunks[-1].append(i)
        else:
            chunks.append([i])
    return chunks


def mine_hard_negatives(
    encoder: MentionEncoder, index: object, examples: Sequence[Example], n: int
) -> np.ndarray:
    """int64 (len(examples), n): for each mention, its ``n`` nearest entities other than the gold (-1 pads)."""
    vectors = encoder.encode([m for m, _ in examples])
    _, rows = index.search(vectors, n + 1)
    out = np.full((len(examples), n), -1, dtype=np.int64)
    for i, (found, (_, gold)) in enumerate(zip(rows, examples)):
        negatives = [int(r) for r in found if r >= 0 and r != gold][:n]
        out[i, : len(negatives)] = negatives
    return out


def recall_at(encoder: MentionEncoder, index: object, examples: Sequence[Example], ks: Sequence[int]) -> Dict[str, float]:
    """Dense recall@k of ``examples`` (a dev set's gold mentions)."""
    if not examples:
        return {f"recall_at_{k}": 0.0 for k in ks}
    _, rows = index.search(encoder.encode([m for m, _ in examples]), max(ks))
    golds = np.asarray([g for _, g in examples])[:, None]
    return {f"recall_at_{k}": round(float((rows[:, :k] == golds).any(axis=1).mean()), 4) for k in ks}


def train_mention_encoder(
    encoder: MentionEncoder,
    entity_vectors: np.ndarray,
    index: object,
    train: Sequence[Example],
    dev: Sequence[Example],
    output: Path,
    settings: TrainingSettings = TrainingSettings(),
    resume: bool = False,
    log: Callable[[str], None] = print,
) -> List[Dict[str, float]]:
    """Train ``encoder`` in place; saves ``output/best`` (the epoch of best dev recall@30) and
    ``output/state`` (to resume from). entity_vectors: float32 (n_entities, dim), row i = KB row i. RETURNS the curve:
    one dict per epoch (step, minutes, loss, dev recall)."""
    output.mkdir(parents=True, exist_ok=True)
    module = encoder.module
    head = [p for n, p in module.named_parameters() if n.startswith("projection.")]
    body = [p for n, p in module.named_parameters() if not n.startswith("projection.")]
    optimizer = torch.optim.AdamW(
        [{"params": body, "lr": settings.lr}, {"params": head, "lr": settings.lr * settings.head_lr_scale}],
        weight_decay=0.01,
    )
    entities = torch.from_numpy(np.array(entity_vectors, dtype=np.float32))  # a copy: the KB may be memory-mapped read-only
    curve: List[Dict[str, float]] = []
    first_epoch, best, step, minutes = 0, -1.0, 0, 0.0
    state_dir = output / STATE_DIR
    saved = _saved_state(state_dir) if resume else None
    if saved is not None:
        state_dir = saved
        progress = json.loads((state_dir / "progress.json").read_text(encoding="utf8"))
        restored = MentionEncoder.load(state_dir / "encoder")
        module.load_state_dict(restored.module.state_dict())
        optimizer.load_state_dict(torch.load(state_dir / "optimizer.pt", weights_only=True))
        first_epoch, best, step, minutes, curve = (
            progress["epoch"], progress["best"], progress["step"], progress["minutes"], progress["curve"],
        )
        log(f"Resumed after epoch {first_epoch} (step {step}, best dev recall@30 {best})")
        state_dir = output / STATE_DIR
    rng = random.Random(settings.seed)
    for _ in range(first_epoch):  # the shuffles of the epochs already done, so a resumed run shuffles alike
        rng.shuffle(doc_chunks(train, settings.batch_size // 4 or 1))
    for epoch in range(first_epoch, settings.epochs):
        torch.manual_seed(settings.seed + epoch)  # per epoch, so that a resumed run draws the same dropout
        started = time.time()
        module.eval()
        negatives = mine_hard_negatives(encoder, index, train, settings.hard_negatives)
        chunks = doc_chunks(train, settings.batch_size // 4 or 1)
        rng.shuffle(chunks)
        batches = [sum(chunks[i : i + 4], []) for i in range(0, len(chunks), 4)]
        module.train()
        losses = []
        for batch in batches:
            loss = _step(encoder, entities, train, negatives, batch, settings)
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(module.parameters(), 1.0)
            optimizer.step()
            losses.append(loss.item())
            step += 1
            if step % 50 == 0:
                log(f"epoch {epoch + 1} step {step} loss {np.mean(losses[-50:]):.4f}")
            if settings.max_steps and step >= settings.max_steps:
                break
        module.eval()
        minutes += (time.time() - started) / 60
        scores = recall_at(encoder, index, dev, (1, 10, 30, 100))
        point = {"epoch": epoch + 1, "step": step, "minutes": round(minutes, 1), "loss": round(float(np.mean(losses)), 4), **scores}
        curve.append(point)
        log(json.dumps(point))
        if scores["recall_at_30"] > best:
            best = scores["recall_at_30"]
            encoder.save(output / BEST_DIR)
        _save_state(encoder, optimizer, state_dir, {"epoch": epoch + 1, "best": best, "step": step,
                                                    "minutes": minutes, "curve": curve, "settings": asdict(settings)})
        if settings.max_steps and step >= settings.max_steps:
            break
    return curve


def _step(
    encoder: MentionEncoder, entities: torch.Tensor, train: Sequence[Example], negatives: np.ndarray,
    batch: List[int], settings: TrainingSettings,
) -> torch.Tensor:
    """The loss of one batch: each mention against the batch's gold entities and hard negatives."""
    s = encoder.settings
    inputs = mention_batch(encoder.tokenizer, [train[i][0] for i in batch], s.window_tokens, s.max_length, s.window_stride)
    golds = [train[i][1] for i in batch]
    pool = list(dict.fromkeys(golds + [int(r) for r in negatives[batch].ravel() if r >= 0]))
    column = {row: j for j, row in enumerate(pool)}
    with encoder_autocast(encoder.device, s.encoder_dtype):
        mentions = encoder.module(**vars(inputs))  # (B, dim)
    scores = mentions.float() @ entities[pool].T / settings.temperature  # (B, P)
    targets = torch.tensor([column[g] for g in golds])
    return torch.nn.functional.cross_entropy(scores, targets)


def _save_state(encoder: MentionEncoder, optimizer: torch.optim.Optimizer, state_dir: Path, progress: Dict) -> None:
    """Encoder, optimizer state and progress, written to a new folder that then replaces ``state_dir``
    (``kb.files.new_dir``): a run killed at any point leaves one complete state (``state`` or, mid-swap, the old
    one renamed aside: ``kb.files.moved_aside``)."""
    state_dir.parent.mkdir(parents=True, exist_ok=True)
    remove_temps(state_dir.parent, [state_dir.name])  # what a killed run left
    with new_dir(state_dir) as new:
        encoder.save(new / "encoder")
        torch.save(optimizer.state_dict(), new / "optimizer.pt")
        write_json(new / "progress.json", progress)


def _saved_state(state_dir: Path) -> Optional[Path]:
    """The complete saved state, if any (see ``_save_state``)."""
    for folder in (state_dir, moved_aside(state_dir)):
        if folder is not None and (folder / "progress.json").is_file():
            return folder
    return None


__all__ = ["TrainingSettings", "train_mention_encoder", "mine_hard_negatives", "recall_at", "doc_chunks"]
