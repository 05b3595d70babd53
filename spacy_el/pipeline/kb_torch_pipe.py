"""``KBTorchPipe``: what spacy_el's trainable components share (the shared KB saved inside the pipeline,
a PyTorch layer built lazily from dims the KB gives, and serialisation that restores that layer
before reading its weights, as spacy-experimental's coref does)."""
from pathlib import Path
from typing import Any, Callable, ClassVar, Dict, Iterable, List, Optional, Tuple, Type

import srsly
from spacy import util
from spacy.pipeline import TrainablePipe
from spacy.training import Example, validate_examples
from spacy.vocab import Vocab

from ..kb import ElKnowledgeBase
from .settings import ComponentSettings

_UNSET = object()  # a setting missing from cfg (a pipeline saved before it existed): its default


class KBTorchPipe(TrainablePipe):
    """Base class. Subclasses set ``dim_names`` (the model dims saved with the component, e.g. "nE"),
    implement ``_build_torch_layer`` (create the model's PyTorch layer from those dims) and may
    override ``_after_load`` (rebuild state derived from ``cfg`` after deserialisation)."""

    dim_names: Tuple[str, ...] = ("nE",)
    settings_class: ClassVar[Type[ComponentSettings]] = ComponentSettings
    kb: ElKnowledgeBase

    def _build_torch_layer(self) -> None:
        raise NotImplementedError

    def _after_load(self) -> None:
        """Hook run after from_bytes/from_disk."""

    # -- settings ----------------------------------------------------------------------------------
    @property
    def settings(self) -> ComponentSettings:
        """The component's settings, typed and checked (``settings_class``), read from ``cfg``.

        ``cfg`` stays the live store that spaCy saves (and that code may change); the view is rebuilt,
        and so checked again, whenever a setting in ``cfg`` changed since the last read.
        """
        names = self.settings_class.names()
        key = tuple(self.cfg.get(name, _UNSET) for name in names)
        cached = self.__dict__.get("_settings_cache")
        if cached is None or cached[0] != key:
            given = {name: value for name, value in zip(names, key) if value is not _UNSET}
            cached = (key, self.settings_class.from_cfg(given))
            self.__dict__["_settings_cache"] = cached
        return cached[1]

    def _check_settings(self, cfg: Dict[str, Any]) -> None:
        """Raise a ValueError naming the setting of ``cfg`` that is not valid."""
        if self.settings_class is not ComponentSettings:
            self.settings_class.from_cfg({k: v for k, v in cfg.items() if k in self.settings_class.names()})

    def _after_configure(self) -> None:
        """Hook run after :meth:`configure` changed ``cfg``."""

    def configure(self, **settings: Any) -> None:
        """Change settings of a (trained) component, checked as at construction; used by the
        ``spacy-el.ComponentSettings.v1`` callback to set up a component sourced into another pipeline.
        The settings are saved with the component."""
        allowed = sorted(set(self.cfg) - {"dims"})
        unknown = sorted(set(settings) - set(allowed))
        if unknown:
            raise ValueError(f"[spacy_el] {self.name} has no setting {unknown}; its settings are {allowed}.")
        self._check_settings({**self.cfg, **settings})
        self.cfg.update(settings)
        self._after_configure()

    # -- the KB ------------------------------------------------------------------------------------
    def set_kb(self, kb_loader: Callable[[Vocab], ElKnowledgeBase]) -> None:
        kb = kb_loader(self.vocab)
        if not isinstance(kb, ElKnowledgeBase):
            raise ValueError(f"[spacy_el] {self.name} needs an ElKnowledgeBase, got {type(kb).__name__}.")
        self.kb = kb

    def _require_kb_with_vectors(self) -> None:
        """At initialize: the model is sized from the KB's entity vectors, so they must exist."""
        if self.kb.is_empty():
            raise ValueError(
                f"[spacy_el] {self.name} has an empty KB. Give one in the config: "
                "[initialize.components.<name>.kb_loader] @misc = \"spacy-el.KBFromDisk.v1\" path = \"kb/...\"."
            )
        if self.kb.entities.vectors is None:
            raise ValueError(
                f"[spacy_el] {self.name} needs entity vectors in the KB: build it with "
                "`python -m spacy_el kb build ... --vectors compute`."
            )

    def _check_initialized(self) -> None:
        if not self.model.layers:
            raise ValueError(
                f"[spacy_el] The {self.name} component is not initialised: call nlp.initialize() "
                "(with a kb_loader) or load a trained pipeline."
            )
        if not self.kb.is_empty() and self.kb.entity_vector_length != self.model.get_dim("nE"):
            raise ValueError(
                f"[spacy_el] The KB's entity vectors have width {self.kb.entity_vector_length}, but {self.name} "
                f"was trained with width {self.model.get_dim('nE')}: use the KB it was trained with."
            )

    def _start_update(self, examples: Iterable[Example], losses: Optional[Dict[str, float]]) -> Tuple[List[Example], Dict[str, float]]:
        """The checks every ``update`` starts with. RETURNS: the examples as a list, and ``losses``
        (created if None) with this component's entry."""
        if losses is None:
            losses = {}
        losses.setdefault(self.name, 0.0)
        examples = list(examples)
        validate_examples(examples, f"{type(self).__name__}.update")
        self._check_initialized()
        return examples, losses

    def _scalar_loss_step(self, batch: Any, sgd: Optional[Any], losses: Dict[str, float]) -> Dict[str, float]:
        """One update on a model whose forward returns ``(loss (1,) array, outputs)``: backpropagate
        gradient 1 into the loss, step the optimizer, add the loss to ``losses``."""
        (loss, _), backprop = self.model.begin_update(batch)
        value, d_loss = self.get_loss([], loss)
        backprop((d_loss, None))
        if sgd is not None:
            self.finish_update(sgd)
        losses[self.name] += value
        return losses

    def get_loss(self, examples: Iterable[Example], scores: Any) -> Tuple[float, Any]:
        """``scores`` is the model's (1,) loss array: the loss is its value and its gradient is 1."""
        return float(self.model.ops.to_numpy(scores)[0]), self.model.ops.alloc1f(1) + 1.0

    # -- serialisation -----------------------------------------------------------------------------
    def _dims(self) -> Dict[str, int]:
        return {name: self.model.get_dim(name) for name in self.dim_names} if self.model.layers else {}

    def _cfg_to_save(self) -> Dict[str, Any]:
        return {**self.cfg, "dims": self._dims()}

    def _restore_model(self, dims: Dict[str, int]) -> None:
        """Build the torch layer from saved dims before its weights are read (nothing to build when
        the component was saved uninitialised)."""
        if dims:
            for name, value in dims.items():
                if not self.model.has_dim(name):
                    self.model.set_dim(name, value)
            self._build_torch_layer()

    def _load_model_bytes(self, data: bytes, where: str) -> None:
        self._restore_model(self.cfg.get("dims", {}))
        try:
            self.model.from_bytes(data)
        except (ValueError, KeyError, TypeError) as err:
            raise ValueError(f"[spacy_el] Cannot load the {self.name} model from {where}: {err}") from err

    def to_bytes(self, *, exclude: Iterable[str] = tuple()) -> bytes:
        serializers = {
            "cfg": lambda: srsly.json_dumps(self._cfg_to_save()),
            "vocab": lambda: self.vocab.to_bytes(exclude=exclude),
            "kb": self.kb.to_bytes,
            "model": self.model.to_bytes,
        }
        return util.to_bytes(serializers, exclude)

    def from_bytes(self, bytes_data: bytes, *, exclude: Iterable[str] = tuple()) -> "KBTorchPipe":
        deserializers = {
            "cfg": lambda b: self.cfg.update(srsly.json_loads(b)),
            "vocab": lambda b: self.vocab.from_bytes(b, exclude=exclude),
            "kb": lambda b: self.kb.from_bytes(b),
            "model": lambda b: self._load_model_bytes(b, "bytes"),
        }
        util.from_bytes(bytes_data, deserializers, exclude)
        self._after_load()
        return self

    def to_disk(self, path: Path, *, exclude: Iterable[str] = tuple()) -> None:
        serializers = {
            "cfg": lambda p: srsly.write_json(p, self._cfg_to_save()),
            "vocab": lambda p: self.vocab.to_disk(p, exclude=exclude),
            "kb": lambda p: self.kb.to_disk(p),
            "model": lambda p: self.model.to_disk(p),
        }
        util.to_disk(path, serializers, exclude)

    def from_disk(self, path: Path, *, exclude: Iterable[str] = tuple()) -> "KBTorchPipe":
        deserializers = {
            "cfg": lambda p: self.cfg.update(srsly.read_json(p)),
            "vocab": lambda p: self.vocab.from_disk(p, exclude=exclude),
            "kb": lambda p: self.kb.from_disk(p),
            "model": lambda p: self._load_model_bytes(p.read_bytes(), str(p)),
        }
        util.from_disk(path, deserializers, exclude)
        self._after_load()
        return self


__all__ = ["KBTorchPipe"]
