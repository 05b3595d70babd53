"""Diagnostic: which of paper Table 4's hard-case mentions each GUM model predicts as a mention.

``benchmarks.joint_coref_linker`` reports ``hard_case_found``, the *share* of the hard cases
predicted as mentions. On GUM test the Standalone, Local and Global rows share one value (267 of
358); this prints, for the coreference-only, Local and Global models of ``python -m spacy project run
all projects/joint_coref_linker``, how many each finds, how far apart the found *sets* are, and the texts and widths (tokens) of
the mentions that Global misses. Prints only; writes nothing.
"""
import argparse
from collections import Counter
from pathlib import Path
from typing import Dict, Set, Tuple

import spacy
import torch

from spacy_el.scoring.scorers import doc_linked_clusters

from .common import SHARED_DATA
from .joint_coref_linker import NAME, find_hard_cases, load_datasets, predict
from .results_io import ROOT

SYSTEMS = ("coref", "local", "global")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(SHARED_DATA))
    parser.add_argument("--models", default=str(ROOT / "training" / "jcl" / "gum"))
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    data = argparse.Namespace(data=args.data, datasets=["gum-test"], limit=0)
    gold = load_datasets(data, spacy.blank("en"))["gum-test"]
    found: Dict[str, Set[Tuple[int, Tuple[int, int]]]] = {}
    hard = None
    for system in SYSTEMS:
        nlp = spacy.load(Path(args.models) / system / "model-best")
        if hard is None:  # the cases depend on the KB and the candidate count only, not on the model
            pipe = nlp.get_pipe(NAME)
            hard = find_hard_cases(pipe.kb, gold, pipe.candidates.top_k)
        pred, _ = predict(nlp, gold, 8)
        predicted = [{m for cluster in doc_linked_clusters(p) for m, _ in cluster} for p in pred]
        found[system] = {(d, case.mention) for d, cases in enumerate(hard) for case in cases if case.mention in predicted[d]}
    cases = [(d, case.mention) for d, doc_cases in enumerate(hard) for case in doc_cases]
    print(f"hard-case mentions: {len(cases)}")
    for system in SYSTEMS:
        print(f"found by {system}: {len(found[system])}")
    for i, a in enumerate(SYSTEMS):
        for b in SYSTEMS[i + 1:]:
            print(f"found by only one of {a} and {b}: {len(found[a] ^ found[b])}")
    missed = [gold[d].char_span(*m) for d, m in cases if (d, m) not in found["global"]]
    print(f"missed by global: {len(missed)}; widths in tokens: {sorted(Counter(len(s) for s in missed).items())}")
    for span in missed:
        print(f"  {span.text!r}")


if __name__ == "__main__":
    main()
