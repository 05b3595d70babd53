"""What the components write alike, defined once (the Doc conventions themselves are in
``spacy_el/extensions.py``)."""

#: How many ranked candidates a linker writes to ``span._.candidate_scores``.
CANDIDATES_KEPT = 5
#: The label of an entity a component finds itself and has no label for (``entqa_reader``'s own mentions,
#: ``joint_coref_linker``'s clusters written to ``doc.ents``).
ENT_LABEL = "ENT"

__all__ = ["CANDIDATES_KEPT", "ENT_LABEL"]
