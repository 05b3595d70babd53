"""Tiny random BERT, RoBERTa and DeBERTa-v2 encoders saved locally (no model hub): width 32, two layers, a vocabulary
of a few hundred pieces, each with the tokenizer of its family (BERT: a lower-cased WordPiece with BERT's unused
tokens; RoBERTa: a byte-level BPE with its ``<s>``/``</s>`` template and trimmed offsets; DeBERTa-v2: a
SentencePiece-style Unigram with ``[CLS]``/``[SEP]``), trained in milliseconds on a small corpus covering every
printable ASCII character."""
import string
from pathlib import Path
from typing import Iterator

KINDS = ("bert", "roberta", "deberta-v2")
WIDTH = 32

_CORPUS = [
    "Lord Byron was an English poet and peer. He wrote Don Juan in Italy.",
    "Ada Lovelace, his daughter, worked with Charles Babbage in London on the Analytical Engine.",
    "Paris is the capital of France; Berlin is the capital of Germany. Rome is in Italy.",
    "The company Apple Inc. was founded by Steve Jobs. It sells the iPhone and the Mac.",
    "Barack Obama met Angela Merkel in Berlin on Monday. She said the talks went well.",
    "New York City, Washington and Springfield are cities in the United States of America.",
    # the invented names of the pipeline tests (tests/pipeline/conftest.py)
    "Ada Mercer painted the harbour of Orvik at dawn. Lumen played a concert in Mercer; Mercer was loud.",
    "Brisk winds reached Velda where Tamsin Hale waited for Quill Tobin. We drove to Mercer along the river.",
]


def _corpus() -> Iterator[str]:
    for _ in range(20):
        yield from _CORPUS
    yield " ".join(string.ascii_letters + string.digits + string.punctuation)


def _bert_tokenizer() -> object:
    from tokenizers import BertWordPieceTokenizer, processors
    from transformers import BertTokenizerFast

    specials = ["[PAD]", "[unused0]", "[unused1]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    backend = BertWordPieceTokenizer(lowercase=True)
    backend.train_from_iterator(_corpus(), vocab_size=400, min_frequency=1, special_tokens=specials)
    backend.post_processor = processors.BertProcessing(
        ("[SEP]", backend.token_to_id("[SEP]")), ("[CLS]", backend.token_to_id("[CLS]")),
    )
    return BertTokenizerFast(tokenizer_object=backend._tokenizer, model_max_length=512)


def _roberta_tokenizer() -> object:
    from tokenizers import ByteLevelBPETokenizer, processors
    from transformers import RobertaTokenizerFast

    specials = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]
    backend = ByteLevelBPETokenizer(add_prefix_space=False, trim_offsets=True)
    backend.train_from_iterator(_corpus(), vocab_size=400, min_frequency=1, special_tokens=specials)
    backend.post_processor = processors.RobertaProcessing(
        ("</s>", backend.token_to_id("</s>")), ("<s>", backend.token_to_id("<s>")), trim_offsets=True,
        add_prefix_space=False,
    )
    return RobertaTokenizerFast(tokenizer_object=backend._tokenizer, model_max_length=512)


def _deberta_tokenizer() -> object:
    from tokenizers import SentencePieceUnigramTokenizer, processors
    from transformers import DebertaV2TokenizerFast

    specials = ["[PAD]", "[CLS]", "[SEP]", "[UNK]", "[MASK]"]
    backend = SentencePieceUnigramTokenizer()
    backend.train_from_iterator(_corpus(), vocab_size=300, special_tokens=specials, unk_token="[UNK]",
                                initial_alphabet=list(string.printable.strip()))
    cls_id, sep_id = backend.token_to_id("[CLS]"), backend.token_to_id("[SEP]")
    backend.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1", special_tokens=[("[CLS]", cls_id), ("[SEP]", sep_id)],
    )
    return DebertaV2TokenizerFast(tokenizer_object=backend._tokenizer, model_max_length=512)


def save_tiny_encoder(kind: str, path: Path, layers: int = 2, max_positions: int = 512) -> str:
    """A randomly initialised (seed 0) encoder of family ``kind`` (:data:`KINDS`) with its tokenizer, saved at
    ``path``. ``max_positions``: ``max_position_embeddings`` (RoBERTa's counts its padding offset on top)."""
    import torch
    from transformers import BertConfig, BertModel, DebertaV2Config, DebertaV2Model, RobertaConfig, RobertaModel

    torch.manual_seed(0)
    common = dict(hidden_size=WIDTH, num_hidden_layers=layers, num_attention_heads=2, intermediate_size=64)
    if kind == "bert":
        tokenizer = _bert_tokenizer()
        model = BertModel(BertConfig(vocab_size=len(tokenizer), max_position_embeddings=max_positions,
                                     pad_token_id=tokenizer.pad_token_id, **common))
    elif kind == "roberta":
        tokenizer = _roberta_tokenizer()
        model = RobertaModel(RobertaConfig(
            vocab_size=len(tokenizer), max_position_embeddings=max_positions + 2, type_vocab_size=1,
            pad_token_id=tokenizer.pad_token_id, bos_token_id=tokenizer.bos_token_id,
            eos_token_id=tokenizer.eos_token_id, **common,
        ))
    elif kind == "deberta-v2":
        tokenizer = _deberta_tokenizer()
        model = DebertaV2Model(DebertaV2Config(
            vocab_size=len(tokenizer), max_position_embeddings=max_positions, type_vocab_size=0,
            relative_attention=True, position_buckets=32, pos_att_type=["p2c", "c2p"], position_biased_input=False,
            norm_rel_ebd="layer_norm", conv_kernel_size=3, pad_token_id=tokenizer.pad_token_id, **common,
        ))
    else:
        raise ValueError(kind)
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return str(path)


def marker_token(kind: str) -> str:
    """A token of the family's vocabulary that entqa_reader can use as its candidate marker."""
    return {"bert": "[unused0]", "roberta": "<mask>", "deberta-v2": "[MASK]"}[kind]
