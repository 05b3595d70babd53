"""``KBTorchPipe``: what spacy_el's trainable components share (the shared KB saved inside the pipeline,
a PyTorch layer built lazily from dims the KB gives, and serialisation that restores that layer
before reading its weights, as spacy-experimental's coref does)."""
import hashlib
import json
import os
import uuid
from pathlib import Path
from typing import Any, Callable, ClassVar, Dict, Iterable, List, Optional, Tuple, Type

from spacy import util
from spacy.pipeline import TrainablePipe
from spacy.training import Example, validate_examples
from spacy.vocab import Vocab
from thinc.api import Config

from ..extensions import record_qids
from ..kb import ElKnowledgeBase
from .obsolete_settings import migrate_obsolete_settings, refuse_obsolete
from .settings import ComponentSettings, config_value

#: The settings-file key of the model file's checksum (not a setting: never in ``cfg``).
MODEL_CHECKSUM = "model_checksum"
_UNSET = object()  # a setting missing from cfg (a pipeline saved before it existed): its default


class KBTorchPipe(TrainablePipe):
    """Base class. Subclasses set ``dim_names`` (the model dims saved with the component, e.g. "nE"),
    implement ``_build_torch_layer`` (create the model's PyTorch layer from those dims) and may
    override ``_after_load`` (rebuild state derived from ``cfg`` after deserialisation)."""

    dim_names: Tuple[str, ...] = ("nE",)
    #: ``cfg`` keys that are state, not settings (the model dims; subclasses add theirs, e.g. labels).
    state_names: Tuple[str, ...] = ("dims",)
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
        # A list (a list setting read from JSON, or given to configure) is keyed by a copy: changed in
        # place, it still counts as changed.
        key = tuple(_frozen(self.cfg.get(name, _UNSET)) for name in names)
        cached = self.__dict__.get("_settings_cache")
        if cached is None or cached[0] != key:
            given = {name: value for name, value in zip(names, key) if value is not _UNSET}
            cached = (key, self.settings_class.from_cfg(given))
            self.__dict__["_settings_cache"] = cached
        return cached[1]

    def _check_settings(self, cfg: Dict[str, Any]) -> None:
        """Raise a ValueError naming the setting of ``cfg`` that is not valid (subclasses add checks of
        the cfg's other state, such as labels)."""
        self.settings_class.from_cfg({k: v for k, v in cfg.items() if k in self.settings_class.names()})

    def _after_configure(self) -> None:
        """Hook run after :meth:`configure` changed ``cfg``."""

    def configure(self, **settings: Any) -> None:
        """Change settings of a (trained) component, checked as at construction; used by the
        ``spacy-el.ComponentSettings.v1`` callback to set up a component sourced into another pipeline.
        The settings are saved with the component."""
        refuse_obsolete(self.settings_class.component, self.name, settings)  # says what replaced it
        self.settings.updated(**settings)  # refuses unknown names and invalid values, naming them
        self._check_settings({**self.cfg, **settings})
        self.cfg.update(settings)
        self._after_configure()

    # -- the KB ------------------------------------------------------------------------------------
    def set_kb(self, kb_loader: Callable[[Vocab], ElKnowledgeBase]) -> None:
        kb = kb_loader(self.vocab)
        if not isinstance(kb, ElKnowledgeBase):
            raise ValueError(f"[spacy_el] {self.name} needs an ElKnowledgeBase, got {type(kb).__name__}.")
        self.kb = kb

    # -- predictions: span._.qid ---------------------------------------------------------------------
    def __call__(self, doc: Any) -> Any:
        doc = super().__call__(doc)
        self._record_qids(doc)
        return doc

    def pipe(self, stream: Iterable[Any], *, batch_size: int = 128) -> Any:
        for doc in super().pipe(stream, batch_size=batch_size):
            self._record_qids(doc)
            yield doc

    def _record_qids(self, doc: Any) -> None:
        """Record the QIDs of the Doc's linked ids (``span._.qid``) when the KB stores QIDs (``kb from-dumps``)."""
        kb = getattr(self, "kb", None)
        if kb is not None and kb.entities.qids is not None:
            record_qids(doc, kb.qid_of)

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
        """The dims the torch layer is built from, or ``{}`` before ``initialize`` has set them (a model
        may hold layers before then, as ner_stack_lstm's tok2vec: a set dim is what tells)."""
        if not self.model.layers or not all(self.model.has_dim(name) for name in self.dim_names):
            return {}
        return {name: self.model.get_dim(name) for name in self.dim_names}

    def _cfg_to_save(self, model_bytes: Optional[bytes] = None) -> Dict[str, Any]:
        """The settings file: ``cfg``, the model dims and, when the model is saved with it, the model
        file's checksum (``{"sha256": hex, "bytes": n}`` under ``MODEL_CHECKSUM``, as the KB manifest
        checksums its files)."""
        saved = {**self.cfg, "dims": self._dims()}
        if model_bytes is not None:
            saved[MODEL_CHECKSUM] = _checksum(model_bytes)
        return saved

    def _cfg_json(self, model_bytes: Optional[bytes] = None) -> str:
        """:meth:`_cfg_to_save` as JSON, by the standard library's ``json``, which writes every float exactly
        (srsly's keeps ten decimals: 1/3 becomes 0.3333333333 and 1e-20 becomes 0.0, a setting changed on
        saving)."""
        return json.dumps(self._cfg_to_save(model_bytes), indent=2)

    def _read_cfg(self, read: Callable[[], bytes], where: str) -> Optional[Dict[str, Any]]:
        """Check a saved settings file (``read`` gives its bytes) and merge it into ``cfg``. It is parsed by the
        standard library's ``json``, which reads a float back exactly as written (srsly's reads 0.3 as
        0.30000000000000004). RETURNS: the model checksum it holds (None from a pipeline saved before
        checksums). Every error names ``where``: a corrupted settings file otherwise fails far from its cause
        (a TypeError in ``dict.update``, a shape error later). Settings that spacy_el no longer has (saved by
        an earlier version) are migrated with a warning or refused, never merged silently
        (:mod:`~spacy_el.pipeline.obsolete_settings`)."""
        try:
            saved = json.loads(read())
        except (ValueError, TypeError, UnicodeDecodeError, OSError) as err:
            raise ValueError(f"[spacy_el] Cannot read the {self.name} settings in {where}: {err}") from err
        if not isinstance(saved, dict):
            raise ValueError(f"[spacy_el] The {self.name} settings in {where} must be a JSON object, got {type(saved).__name__}.")
        saved = dict(saved)
        checksum = saved.pop(MODEL_CHECKSUM, None)
        dims = saved.get("dims", {})
        if not isinstance(dims, dict) or not all(
            isinstance(value, int) and not isinstance(value, bool) and value >= 0 for value in dims.values()
        ):
            raise ValueError(f"[spacy_el] The {self.name} settings in {where} are invalid: dims must map names to integers >= 0, got {dims!r}.")
        if checksum is not None and not (
            isinstance(checksum, dict) and isinstance(checksum.get("sha256"), str) and len(checksum["sha256"]) == 64
            and isinstance(checksum.get("bytes"), int)
        ):
            raise ValueError(f"[spacy_el] The {self.name} settings in {where} are invalid: {MODEL_CHECKSUM} is {checksum!r}.")
        saved, _ = migrate_obsolete_settings(
            saved, component=self.settings_class.component, pipe_name=self.name,
            generator=getattr(self, "candidates", None), where=where,
        )
        unknown = sorted(set(saved) - set(self.settings_class.names()) - set(self.state_names))
        if unknown:  # merged, they would sit in cfg unread and be saved again as if they meant something
            raise ValueError(
                f"[spacy_el] The {self.name} settings in {where} hold {unknown}, which {self.settings_class.component} "
                f"neither has as a setting nor keeps as state ({sorted(self.state_names)}): was the file written by "
                "another component or edited by hand? Remove those keys, or save the pipeline again."
            )
        try:
            self._check_settings({**self.cfg, **saved})
        except (ValueError, TypeError) as err:
            message = str(err).replace("[spacy_el] ", "", 1)
            raise ValueError(f"[spacy_el] The {self.name} settings in {where} are invalid: {message}") from err
        self.cfg.update(saved)
        return checksum

    def _restore_model(self, dims: Dict[str, int]) -> None:
        """Build the torch layer from saved dims before its weights are read (nothing to build when
        the component was saved uninitialised)."""
        if dims:
            for name, value in dims.items():
                if not self.model.has_dim(name):
                    self.model.set_dim(name, value)
            self._build_torch_layer()

    def _load_model_bytes(self, data: bytes, where: str, checksum: Optional[Dict[str, Any]] = None) -> None:
        """Read the model from ``data`` (from ``where``), first checked against ``checksum`` (saved in
        the settings file): flipped bits in the weights keep the safetensors header valid and would
        otherwise load silently."""
        if checksum is not None and _checksum(data) != {"sha256": checksum["sha256"], "bytes": checksum["bytes"]}:
            raise ValueError(
                f"[spacy_el] The {self.name} model in {where} is corrupted: it does not match the SHA-256 checksum "
                "saved in the component's settings (cfg). Save the pipeline again from an intact copy."
            )
        self._restore_model(self.cfg.get("dims", {}))
        try:
            self.model.from_bytes(data)
        except (ValueError, KeyError, TypeError) as err:
            raise ValueError(f"[spacy_el] Cannot load the {self.name} model from {where}: {err}") from err

    def _model_bytes(self, exclude: Iterable[str]) -> Optional[bytes]:
        """The model's bytes, serialised once for both the model file and its checksum in the cfg."""
        return None if "model" in exclude else self.model.to_bytes()

    def to_bytes(self, *, exclude: Iterable[str] = tuple()) -> bytes:
        model_bytes = self._model_bytes(exclude)
        serializers = {
            "cfg": lambda: self._cfg_json(model_bytes).encode("utf8"),
            "vocab": lambda: self.vocab.to_bytes(exclude=exclude),
            "kb": self.kb.to_bytes,
            "model": lambda: model_bytes,
        }
        return util.to_bytes(serializers, exclude)

    def from_bytes(self, bytes_data: bytes, *, exclude: Iterable[str] = tuple()) -> "KBTorchPipe":
        checksum: Dict[str, Any] = {}  # filled by "cfg", which util.from_bytes reads before "model"
        deserializers = {
            "cfg": lambda b: checksum.update(model=self._read_cfg(lambda: b, "bytes")),
            "vocab": lambda b: self.vocab.from_bytes(b, exclude=exclude),
            "kb": lambda b: self.kb.from_bytes(b),
            "model": lambda b: self._load_model_bytes(b, "bytes", checksum.get("model")),
        }
        util.from_bytes(bytes_data, deserializers, exclude)
        self._after_load()
        return self

    def to_disk(self, path: Path, *, exclude: Iterable[str] = tuple()) -> None:
        model_bytes = self._model_bytes(exclude)
        serializers = {
            "cfg": lambda p: Path(p).write_text(self._cfg_json(model_bytes) + "\n", encoding="utf8"),
            "vocab": lambda p: self.vocab.to_disk(p, exclude=exclude),
            "kb": lambda p: self.kb.to_disk(p),
            "model": lambda p: p.write_bytes(model_bytes),  # what Model.to_disk writes
        }
        util.to_disk(path, serializers, exclude)
        self._record_settings_in_pipeline_config(Path(path))

    def _record_settings_in_pipeline_config(self, path: Path) -> None:
        """Write this component's settings into the ``config.cfg`` of the pipeline being saved (beside ``path``;
        ``Language.to_disk`` writes it before the components) where ``configure`` changed them after the pipeline
        was built: the config then says what the component predicts with, and a config override at loading is
        told apart from it (:meth:`_config_overrides`). Written under a temporary name, renamed into place;
        nothing where there is no such config.cfg or it has no block of this component's factory."""
        config_path = path.parent / "config.cfg"
        found = self._pipeline_config_block(config_path, interpolate=False)
        if found is None or found[1].get("factory") != self.settings_class.component:
            return
        config, block = found
        changed = {name: config_value(self.cfg[name]) for name in self.settings_class.names()
                   if name in self.cfg and name in block and _frozen(block[name]) != _frozen(self.cfg[name])}
        if changed:
            block.update(changed)
            tmp = config_path.with_name(f".{config_path.name}.{uuid.uuid4().hex[:8]}.tmp")
            try:
                config.to_disk(tmp)
                os.replace(tmp, config_path)
            finally:
                tmp.unlink(missing_ok=True)

    def from_disk(self, path: Path, *, exclude: Iterable[str] = tuple()) -> "KBTorchPipe":
        checksum: Dict[str, Any] = {}  # filled by "cfg", which util.from_disk reads before "model"
        overrides = self._config_overrides(Path(path))
        deserializers = {
            "cfg": lambda p: checksum.update(model=self._read_cfg(Path(p).read_bytes, str(p))),
            "vocab": lambda p: self.vocab.from_disk(p, exclude=exclude),
            "kb": self._kb_from_disk,
            "model": lambda p: self._load_model_bytes(p.read_bytes(), str(p), checksum.get("model")),
        }
        util.from_disk(path, deserializers, exclude)
        self.cfg.update(overrides)  # over the saved settings: what the config asked for is what runs
        self._after_load()
        return self

    def _pipeline_config_block(self, config_path: Path, interpolate: bool) -> Optional[Tuple[Config, Dict[str, Any]]]:
        """``(config, its [components.<name>] block)`` of the pipeline config ``config_path``; None where there is
        no such file, it is not a pipeline's config or it has no block for this component."""
        if not config_path.is_file():
            return None
        try:
            config = Config().from_disk(config_path, interpolate=interpolate)
            block = config["components"][self.name]
        except Exception:  # not a pipeline's config, or not one with this component
            return None
        return (config, block) if isinstance(block, dict) else None

    def _config_overrides(self, path: Path) -> Dict[str, Any]:
        """The settings this component was built with that differ from those the saved pipeline's
        ``config.cfg`` (beside ``path``) gives it: config overrides at loading, as
        ``spacy.load(path, config={"components": {name: {setting: value}}})``. The saved settings file, which
        ``from_disk`` merges into ``cfg``, must not replace them: it holds the settings as they were saved
        (with any ``configure`` after training, which the ``config.cfg`` of a pipeline saved before
        :meth:`_record_settings_in_pipeline_config` does not show), and a setting the config did not change
        keeps that saved value. ``{}`` where there is no such ``config.cfg`` (a component
        loaded from a folder of its own) or it names no component of this name."""
        found = self._pipeline_config_block(path.parent / "config.cfg", interpolate=True)
        if found is None:
            return {}
        saved = found[1]
        defaults = self.settings_class.defaults()
        return {
            name: self.cfg[name] for name in self.settings_class.names()
            if name in self.cfg and _frozen(self.cfg[name]) != _frozen(saved.get(name, defaults.get(name, _UNSET)))
        }

    def _kb_from_disk(self, path: Path) -> None:
        # Memory-mapped: processes that load the same pipeline (annotate workers, Ray actors) share the KB's
        # pages instead of holding a copy each.
        if not Path(path).exists():
            raise ValueError(
                f"[spacy_el] {path} is missing: this {self.name} was saved without its KB (trained heads shipped "
                f"for a KB of your choice). Give it one: python -m spacy_el kb attach PIPELINE KB OUTPUT "
                f"--component {self.name}"
            )
        self.kb.from_disk(path, mmap=True)


def _frozen(value: Any) -> Any:
    """A list as a tuple (a settings-cache key that does not change when the list does)."""
    return tuple(value) if isinstance(value, list) else value


def _checksum(data: bytes) -> Dict[str, Any]:
    return {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}


__all__ = ["KBTorchPipe"]
