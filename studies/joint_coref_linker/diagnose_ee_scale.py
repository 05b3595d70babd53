"""Diagnostic: how large Entity Equalization's ``a_i`` is next to the span representations ``g_i``.

Loads a trained ``joint_coref_linker`` (default: the OntoGUM entity-equalization model of
``python -m spacy project run all projects/joint_coref_linker``), scores the first OntoGUM dev document and prints the mean norm
of ``g`` and of ``a = equalized_representations(soft_clusters(P), g)``. ``a_i`` is a sum over the
soft cluster (Kantor & Globerson 2019, eq. 3), so with a diffuse antecedent distribution in a long
document it is many times larger than ``g_i``; the mean variant (``equalized_mean_representations``,
refinement ``entity_equalization_mean``) is printed beside it. Prints only; writes nothing.
"""
import argparse
from pathlib import Path

import spacy
import torch

from spacy_el.ml.joint_coref.entity_equalization import equalized_mean_representations, equalized_representations, soft_clusters
from spacy_el.ml.joint_coref.scorer import antecedent_distribution

from .common import SHARED_DATA, read_corpus, torch_module
from .results_io import ROOT


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=str(ROOT / "training/jcl/ontogum/entity_equalization/model-best"))
    parser.add_argument("--data", default=str(SHARED_DATA))
    args = parser.parse_args()
    nlp = spacy.load(args.model)
    pipe = nlp.get_pipe("joint_coref_linker")
    module = torch_module(nlp, "joint_coref_linker")
    module.eval()
    gum = Path(args.data) / "gum"
    reference = read_corpus("spacy-el.CorefConllReader.v1", nlp, path=gum / "coref/ontogum/conll", split="dev",
                            splits_path=gum / "splits.md", limit=1)[0]
    inputs = pipe._batch([nlp.make_doc(reference.text)]).docs[0]
    with torch.no_grad():
        vectors = module.token_vectors([inputs])[0]
        spans = torch.as_tensor(inputs.spans)
        kept = spans[module._kept(vectors, spans, inputs)]
        g = module.span_embedder(vectors, kept)
        scorer = module.scorer
        mention = scorer.mention_ffnn(g).squeeze(-1)
        k, starts = scorer.max_antecedents, kept[:, 0]
        coarse = (scorer.coarse_antecedents(g, mention, scorer._positions(starts), k)
                  if scorer._coarse_pruned(len(g), k) else None)
        coref = scorer._coref_edges(g, mention, scorer._distances(starts, k), starts, k, coarse)
        no_links = torch.full((len(mention), 1), float("-inf"))
        q = soft_clusters(antecedent_distribution(coref, mention, no_links), validate=False)
        a, a_mean = equalized_representations(q, g), equalized_mean_representations(q, g)
    print(f"mentions {len(mention)}; mean |g| {g.norm(dim=1).mean():.1f}; mean |a| {a.norm(dim=1).mean():.1f}; "
          f"max |a| {a.norm(dim=1).max():.1f}; mean variant: mean |a| {a_mean.norm(dim=1).mean():.1f}, "
          f"max |a| {a_mean.norm(dim=1).max():.1f}")


if __name__ == "__main__":
    main()
