"""The architectures' arguments are checked by one mechanism (``spacy_el.ml.arguments``), as the components'
settings are: a bad value is refused naming the architecture, the argument and what it must be, before any
model is built."""
import pytest
import spacy

# component -> (its architecture's name in errors, a bad model argument, what it must be)
CASES = [
    ("joint_coref_linker", "JointCorefLinker", {"ffnn_depth": 0}, "ffnn_depth must be an int >= 1"),
    ("joint_coref_linker", "JointCorefLinker", {"window": 16, "stride": 15}, r"stride must be an int in \[1, window - 2 = 14\]"),
    ("ner_stack_lstm", "NerStackLstm", {"entity_vectors": "both"}, r"entity_vectors must be one of \['kb', "),
    ("ner_stack_lstm", "NerStackLstm", {"learned_width": 0}, "learned_width must be an int >= 1"),
    ("ner_constrained_linker", "NerConstrainedLinker", {"hidden_width": 0}, "hidden_width must be an int >= 1"),
    ("entity_retriever", "EntityRetriever", {"passage_length": 8, "stride": 9}, r"stride must be an int in \[1, passage_length = 8\]"),
    ("entity_retriever", "EntityRetriever", {"init_scale": 0.0}, r"init_scale must be a finite number > 0.0"),
    ("entqa_reader", "EntQAReader", {"span_reduction": "max"}, r"span_reduction must be one of \['sum', 'marginal'\]"),
    ("entqa_reader", "EntQAReader", {"dropout": 1.0}, r"dropout must be a finite number in \[0.0, 1.0\)"),
]


@pytest.mark.parametrize("component, owner, model, message", CASES, ids=[f"{c[0]}-{next(iter(c[2]))}" for c in CASES])
def test_a_bad_architecture_argument_is_refused_naming_it(component, owner, model, message):
    with pytest.raises(ValueError, match=rf"\[spacy_el E901\] {owner}: {message}"):
        spacy.blank("en").add_pipe(component, config={"model": model})
