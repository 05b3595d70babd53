"""encoder_dtype = "float32" | "bfloat16" | "auto" (spacy_el.ml.autocast)."""
import pytest
import torch

from spacy_el.ml import autocast
from spacy_el.ml.autocast import encoder_autocast, resolve_encoder_dtype

CPU = torch.device("cpu")


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_explicit_dtypes_pass_through(dtype, monkeypatch):
    for native in (True, False):
        monkeypatch.setattr(autocast, "cpu_has_native_bf16", lambda native=native: native)
        assert resolve_encoder_dtype(dtype, CPU) == dtype


@pytest.mark.parametrize("native, expected", [(True, torch.bfloat16), (False, torch.float32)])
def test_auto_follows_the_cpu(native, expected, monkeypatch):
    monkeypatch.setattr(autocast, "cpu_has_native_bf16", lambda: native)
    assert resolve_encoder_dtype("auto", CPU) == str(expected).removeprefix("torch.")
    a = torch.randn(4, 8)
    with encoder_autocast(CPU, "auto"):
        assert (a @ a.t()).dtype == expected


@pytest.mark.parametrize("flags, native", [
    ("fpu sse2 avx2 avx512f avx512bw", False),
    ("fpu avx2 avx512f avx512_bf16 avx512_vnni", True),
    ("fpu avx2 amx_tile amx_bf16 amx_int8", True),
])
def test_cpuinfo_flags(flags, native):
    text = f"processor\t: 0\nmodel name\t: Some CPU\nflags\t\t: {flags}\n\nprocessor\t: 1\nflags\t\t: {flags}\n"
    assert autocast.cpuinfo_has_bf16(text) is native
    assert autocast.cpuinfo_has_bf16("processor\t: 0\n") is False


def test_bad_dtype_names_the_setting():
    with pytest.raises(ValueError, match=r"E021\] Unknown encoder_dtype"):
        resolve_encoder_dtype("float16", CPU)


@pytest.mark.parametrize("component", ["joint_coref_linker", "entity_retriever", "entqa_reader", "ner_constrained_linker"])
def test_architectures_default_to_auto_and_refuse_other_names(component):
    import spacy

    pipe = spacy.blank("en").add_pipe(component)
    assert pipe.model.attrs["encoder_dtype"] == "auto"
    with pytest.raises(ValueError, match=r"E901\] .*: encoder_dtype must be one of"):
        spacy.blank("en").add_pipe(component, config={"model": {"encoder_dtype": "float16"}})
