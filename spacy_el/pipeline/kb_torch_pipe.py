"""``KBTorchPipe``: what spacy_el's trainable components share (the shared KB saved inside the pipeline,
a PyTorch layer built lazily from dims the KB gives, and serialisation that restores that layer
before reading its weights, as spacy-experimental's coref does).

Settings and the settings file
------------------------------
A component's settings are one typed, checked, immutable object, ``pipe.settings`` (an instance of its
``settings_class``, :class:`~spacy_el.pipeline.settings.ComponentSettings`): the one store, which the code reads
and :meth:`KBTorchPipe.configure` replaces. The factory gives it, from the pipeline's ``config.cfg`` (which
``Language`` owns and writes; spacy_el never rewrites it).

The component's settings file, ``<component>/cfg`` (JSON), is derived when it is saved. It holds state: the
model dims (``dims``), the model file's SHA-256 and size (``model_checksum``), what a component keeps beside
(its labels, a counter), and the settings that ``configure`` changed after the component was constructed
(:meth:`KBTorchPipe.settings_changed`). Loading applies those over the settings the factory gave, so:

* a setting that ``configure`` did not change is what the pipeline's config says, a config override at loading
  included (``spacy.load(path, config={"components": {name: {setting: value}}})``);
* a setting that ``configure`` changed keeps its value through saving and loading;
* :func:`~spacy_el.pipeline.configure.configure_pipeline` (``annotate``'s and the command line's settings,
  ``spacy-el.ComponentSettings.v1``) also writes the changes into the pipeline's config
  (:meth:`KBTorchPipe.record_settings_in`): the ``config.cfg`` that ``nlp.to_disk`` writes then says what the
  component predicts with, and the settings file holds no settings, so an override at loading wins;
* save, load and save again write the same bytes;
* a settings file holding a key that is neither a setting nor state is refused, naming the file, and so is a
  model file whose settings file holds no ``model_checksum``.

``pipe.cfg`` is a read-only view of the state and every setting (spaCy's name for a component's settings):
a setting changes with ``configure``, never by writing to ``cfg``.
"""
import copy
import hashlib
import json
from pathlib import Path
from typing import Any, Callable, ClassVar, Dict, Iterable, Iterator, List, Mapping, MutableMapping, Optional, Tuple, Type

from spacy import util
from spacy.pipeline import TrainablePipe
from spacy.training import Example, validate_examples
from spacy.vocab import Vocab
from thinc.api import Model

from ..errors import Errors, untagged
from ..extensions import record_qids, register_extensions
from ..kb import ElKnowledgeBase
from ..kb.files import write_bytes, write_text
from .settings import ComponentSettings

#: The settings-file key of the model file's checksum.
MODEL_CHECKSUM = "model_checksum"
#: The settings-file key of the model dims.
DIMS = "dims"


class KBTorchPipe(TrainablePipe):
    """Base class. Subclasses set ``dim_names`` (the model dims saved with the component, e.g. "nE") and
    ``settings_class``, call ``KBTorchPipe.__init__`` from their constructor, implement ``_build_torch_layer``
    (create the model's PyTorch layer from those dims) and may override ``_after_load`` (rebuild what is
    derived from the settings or the state after deserialisation)."""

    dim_names: Tuple[str, ...] = ("nE",)
    settings_class: ClassVar[Type[ComponentSettings]] = ComponentSettings
    kb: ElKnowledgeBase
    _settings: ComponentSettings
    _constructed: ComponentSettings
    _state: Dict[str, Any]

    def _build_torch_layer(self) -> None:
        raise NotImplementedError

    def _after_load(self) -> None:
        """Hook run after from_bytes/from_disk."""

    def __init__(self, vocab: Vocab, model: Model, name: str, *, settings: ComponentSettings,
                 scorer: Optional[Callable] = None, state: Optional[Dict[str, Any]] = None) -> None:
        """What every component starts with: the Doc extensions registered, an empty KB (``initialize`` or
        ``set_kb`` gives it one), the settings it is constructed with and its state (what the settings file
        keeps beside the dims: name -> initial value, e.g. ``{"labels": []}``)."""
        register_extensions()
        self.vocab = vocab
        self.model = model
        self.name = name
        self.scorer = scorer
        self.kb = ElKnowledgeBase(vocab)
        if not isinstance(settings, self.settings_class):
            raise TypeError(Errors.E801.format(name=self.name, expected=self.settings_class.__name__,
                                               got=type(settings).__name__))
        self._settings = self._constructed = settings
        self._state = dict(state or {})

    @property
    def settings(self) -> ComponentSettings:
        """The component's settings, typed and checked (``settings_class``)."""
        return self._settings

    @property
    def cfg(self) -> Mapping[str, Any]:
        """Read-only: the component's state and every setting, as JSON holds them (a list for a tuple)."""
        return ReadOnlyCfg(self.name, {**copy.deepcopy(self._state), **self._settings.to_dict()})

    def _check_settings(self, settings: ComponentSettings) -> None:
        """Raise a ValueError when ``settings`` (checked on their own already) do not fit the component's state
        (subclasses: e.g. a mode the built model does not have)."""

    def _check_state(self, state: Dict[str, Any]) -> None:
        """Raise a ValueError naming what is wrong in ``state`` (read from a settings file; subclasses)."""

    def _after_configure(self) -> None:
        """Hook run after :meth:`configure` changed the settings."""

    def checked_settings(self, **changes: Any) -> ComponentSettings:
        """The settings ``configure(**changes)`` would give, checked as at construction; nothing changes. An
        unknown setting or a bad value is a ValueError naming it."""
        settings = self._settings.updated(**changes)
        self._check_settings(settings)
        return settings

    def configure(self, **settings: Any) -> None:
        """Change settings of a (trained) component, checked as at construction. The settings changed after
        construction are saved in the component's settings file and win over the pipeline's config when it is
        loaded (module docstring); :func:`~spacy_el.pipeline.configure.configure_pipeline` writes them into the
        pipeline's config instead."""
        self._settings = self.checked_settings(**settings)
        self._after_configure()

    def settings_changed(self) -> Dict[str, Any]:
        """Setting -> value (as JSON holds it) of each setting that differs from the one the component was
        constructed with: what ``configure`` changed, and what the settings file records."""
        now, constructed = self._settings.to_dict(), self._constructed.to_dict()
        return {name: value for name, value in now.items() if value != constructed[name]}

    def record_settings_in(self, config: MutableMapping[str, Any]) -> None:
        """Write the settings changed after construction into ``config``, the component's block of its pipeline's
        config (``nlp.get_pipe_config(name)``); from then on they count as the constructed ones, so the
        settings file no longer holds them and ``config.cfg`` says what the component predicts with."""
        config.update(self.settings_changed())
        self._constructed = self._settings

    # -- the KB ------------------------------------------------------------------------------------
    def set_kb(self, kb_loader: Callable[[Vocab], ElKnowledgeBase]) -> None:
        kb = kb_loader(self.vocab)
        if not isinstance(kb, ElKnowledgeBase):
            raise ValueError(Errors.E802.format(name=self.name, kb_type=type(kb).__name__))
        self.kb = kb

    def _initialize_kb(self, get_examples: Callable[[], Iterable[Example]],
                       kb_loader: Optional[Callable[[Vocab], ElKnowledgeBase]]) -> None:
        """What every component's ``initialize`` does first: check the examples, then load the KB if given."""
        validate_examples(get_examples(), f"{type(self).__name__}.initialize")
        if kb_loader is not None:
            self.set_kb(kb_loader)

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
            raise ValueError(Errors.E803.format(name=self.name))
        if self.kb.entities.vectors is None:
            raise ValueError(Errors.E804.format(name=self.name))

    def _check_initialized(self) -> None:
        if not self.model.layers:
            raise ValueError(Errors.E805.format(name=self.name))
        if not self.kb.is_empty() and self.kb.entity_vector_length != self.model.get_dim("nE"):
            raise ValueError(Errors.E806.format(kb_width=self.kb.entity_vector_length, name=self.name,
                                                width=self.model.get_dim("nE")))

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
        """The settings file: the settings changed after construction, the state, the model dims and, when the
        model is saved with it, the model file's checksum (``{"sha256": hex, "bytes": n}`` under
        ``MODEL_CHECKSUM``, as the KB manifest checksums its files)."""
        saved = {**self.settings_changed(), **copy.deepcopy(self._state), DIMS: self._dims()}
        if model_bytes is not None:
            saved[MODEL_CHECKSUM] = _checksum(model_bytes)
        return saved

    def _cfg_json(self, model_bytes: Optional[bytes] = None) -> str:
        """:meth:`_cfg_to_save` as JSON, by the standard library's ``json``, which writes every float exactly
        (srsly's keeps ten decimals: 1/3 becomes 0.3333333333 and 1e-20 becomes 0.0, a setting changed on
        saving)."""
        return json.dumps(self._cfg_to_save(model_bytes), indent=2)

    def _read_cfg(self, read: Callable[[], bytes], where: str) -> Dict[str, Any]:
        """Check a saved settings file (``read`` gives its bytes) and apply it: its settings over the
        constructed ones, its state. It is parsed by the standard library's ``json``, which reads a float back
        exactly as written (srsly's reads 0.3 as 0.30000000000000004). RETURNS: ``{"dims": ..., "checksum":
        ...}``, what loading the model needs. Every error names ``where``: a corrupted settings file otherwise
        fails far from its cause (a TypeError, a shape error later)."""

        def invalid(problem: str) -> ValueError:
            return ValueError(Errors.E807.format(name=self.name, where=where, problem=problem))

        try:
            saved = json.loads(read())
        except (ValueError, TypeError, UnicodeDecodeError, OSError) as err:
            raise ValueError(Errors.E808.format(name=self.name, where=where, err=err)) from err
        if not isinstance(saved, dict):
            raise ValueError(Errors.E809.format(name=self.name, where=where, got=type(saved).__name__))
        saved = dict(saved)
        if DIMS not in saved:
            raise invalid(f"they hold no {DIMS}.")
        dims = saved.pop(DIMS)
        checksum = saved.pop(MODEL_CHECKSUM, None)
        if not isinstance(dims, dict) or not all(
            isinstance(value, int) and not isinstance(value, bool) and value >= 0 for value in dims.values()
        ):
            raise invalid(f"{DIMS} must map names to integers >= 0, got {dims!r}.")
        if checksum is not None and not (
            isinstance(checksum, dict) and isinstance(checksum.get("sha256"), str) and len(checksum["sha256"]) == 64
            and isinstance(checksum.get("bytes"), int)
        ):
            raise invalid(f"{MODEL_CHECKSUM} is {checksum!r}.")
        names = set(self.settings_class.names())
        unknown = sorted(set(saved) - names - set(self._state))
        if unknown:  # applied, they would be saved again as if they meant something
            raise ValueError(Errors.E810.format(name=self.name, where=where, unknown=unknown,
                                                owner=self.settings_class.owner,
                                                state=sorted(self._state) + [DIMS, MODEL_CHECKSUM]))
        state = {k: v for k, v in saved.items() if k not in names}
        try:
            settings = self.checked_settings(**{k: v for k, v in saved.items() if k in names})
            self._check_state(state)
        except (ValueError, TypeError) as err:
            raise invalid(untagged(str(err))) from err
        self._settings = settings
        self._state.update(state)
        return {DIMS: dims, "checksum": checksum}

    def _restore_model(self, dims: Dict[str, int]) -> None:
        """Build the torch layer from saved dims before its weights are read (nothing to build when
        the component was saved uninitialised)."""
        if dims:
            for name, value in dims.items():
                if not self.model.has_dim(name):
                    self.model.set_dim(name, value)
            self._build_torch_layer()

    def _load_model_bytes(self, data: bytes, where: str, read: Mapping[str, Any]) -> None:
        """Read the model from ``data`` (from ``where``), first checked against the checksum of the settings file
        (``read``: what :meth:`_read_cfg` returned, empty when no settings file was read): flipped bits in the
        weights keep the safetensors header valid and would otherwise load silently."""
        checksum = read.get("checksum")
        if checksum is None:
            raise ValueError(Errors.E811.format(name=self.name, where=where,
                                                problem=f"holds no {MODEL_CHECKSUM}" if read else "was not read"))
        if _checksum(data) != {"sha256": checksum["sha256"], "bytes": checksum["bytes"]}:
            raise ValueError(Errors.E812.format(name=self.name, where=where))
        self._restore_model(read[DIMS])
        try:
            self.model.from_bytes(data)
        except (ValueError, KeyError, TypeError) as err:
            raise ValueError(Errors.E813.format(name=self.name, where=where, err=err)) from err

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
        read: Dict[str, Any] = {}  # filled by "cfg", which util.from_bytes reads before "model"
        deserializers = {
            "cfg": lambda b: read.update(self._read_cfg(lambda: b, "bytes")),
            "vocab": lambda b: self.vocab.from_bytes(b, exclude=exclude),
            "kb": lambda b: self.kb.from_bytes(b),
            "model": lambda b: self._load_model_bytes(b, "bytes", read),
        }
        util.from_bytes(bytes_data, deserializers, exclude)
        self._after_load()
        return self

    def to_disk(self, path: Path, *, exclude: Iterable[str] = tuple()) -> None:
        model_bytes = self._model_bytes(exclude)
        serializers = {
            # Through kb.files: a new temporary name, then a rename, so a symlink planted at the file's place is
            # replaced rather than written through, and a failed save leaves the old file whole.
            "cfg": lambda p: write_text(p, self._cfg_json(model_bytes) + "\n"),
            "vocab": lambda p: self.vocab.to_disk(p, exclude=exclude),
            "kb": lambda p: self.kb.to_disk(p),
            "model": lambda p: write_bytes(p, model_bytes),  # what Model.to_disk writes
        }
        util.to_disk(path, serializers, exclude)

    def from_disk(self, path: Path, *, exclude: Iterable[str] = tuple()) -> "KBTorchPipe":
        read: Dict[str, Any] = {}  # filled by "cfg", which util.from_disk reads before "model"
        deserializers = {
            "cfg": lambda p: read.update(self._read_cfg(Path(p).read_bytes, str(p))),
            "vocab": lambda p: self.vocab.from_disk(p, exclude=exclude),
            "kb": self._kb_from_disk,
            "model": lambda p: self._load_model_bytes(p.read_bytes(), str(p), read),
        }
        util.from_disk(path, deserializers, exclude)
        self._after_load()
        return self

    def _kb_from_disk(self, path: Path) -> None:
        # Memory-mapped: processes that load the same pipeline (annotate workers, Ray actors) share the KB's
        # pages instead of holding a copy each.
        if not Path(path).exists():
            raise ValueError(Errors.E814.format(path=path, name=self.name))
        self.kb.from_disk(path, mmap=True)


def _checksum(data: bytes) -> Dict[str, Any]:
    return {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}


class ReadOnlyCfg(Mapping[str, Any]):
    """A component's ``cfg``: its state and settings, read-only (a setting changes with ``configure``)."""

    def __init__(self, name: str, values: Dict[str, Any]) -> None:
        self._name = name
        self._values = values

    def __getitem__(self, key: str) -> Any:
        return self._values[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __repr__(self) -> str:
        return repr(self._values)

    def _refuse(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError(Errors.E815.format(name=self._name))

    __setitem__ = __delitem__ = update = setdefault = pop = clear = _refuse


__all__ = ["KBTorchPipe", "ReadOnlyCfg"]
