"""The typed settings contract every component's settings class follows."""
import json
from dataclasses import dataclass
from typing import ClassVar, Literal, Optional, Tuple

import pytest

from spacy_el.pipeline.settings import ComponentSettings, setting


@dataclass(frozen=True)
class ToySettings(ComponentSettings):
    owner: ClassVar[str] = "toy"
    top_k: int = setting(10, low=1)
    ratio: float = setting(0.5, low=0.0, high=1.0, high_open=True)
    mode: Literal["a", "b"] = "a"
    threshold: Optional[float] = setting(None, low=0.0, high=1.0)
    key: str = setting("toy", non_empty=True)
    flag: bool = False

    def check(self) -> None:
        if self.mode == "b" and self.threshold is None:
            raise self.invalid("threshold", "set when mode is 'b'")


def test_defaults_feed_the_factory_and_round_trip_through_cfg():
    assert ToySettings.defaults() == {"top_k": 10, "ratio": 0.5, "mode": "a", "threshold": None, "key": "toy", "flag": False}
    settings = ToySettings(top_k=3, ratio=0)
    assert settings.ratio == 0.0 and isinstance(settings.ratio, float)
    assert ToySettings(**settings.to_dict()) == settings


@pytest.mark.parametrize(
    "cfg, message",
    [
        ({"top_k": 0}, r"\[spacy_el E901\] toy: top_k must be an int >= 1, got 0"),
        ({"top_k": True}, r"\[spacy_el E901\] toy: top_k must be an int"),
        ({"top_k": 2.5}, r"\[spacy_el E901\] toy: top_k must be an int"),
        ({"ratio": 1.0}, r"\[spacy_el E901\] toy: ratio must be a finite number in \[0.0, 1.0\)"),
        ({"ratio": float("nan")}, r"\[spacy_el E901\] toy: ratio must be a finite number"),
        ({"ratio": "0.5"}, r"\[spacy_el E901\] toy: ratio must be a finite number"),
        ({"mode": "c"}, r"\[spacy_el E901\] toy: mode must be one of \['a', 'b'\]"),
        ({"threshold": 2.0}, r"\[spacy_el E901\] toy: threshold must be a finite number in .* or null"),
        ({"key": ""}, r"\[spacy_el E901\] toy: key must be a non-empty string"),
        ({"flag": 1}, r"\[spacy_el E901\] toy: flag must be true or false"),
        ({"mode": "b"}, r"\[spacy_el E901\] toy: threshold must be set when mode is 'b'"),
        ({"top_kk": 3}, r"\[spacy_el E902\] toy has no setting \['top_kk'\]"),
    ],
)
def test_invalid_settings_name_the_component_the_setting_and_the_value(cfg, message):
    with pytest.raises(ValueError, match=message):
        ToySettings().updated(**cfg)


def test_updated_checks_as_construction_does():
    settings = ToySettings()
    assert settings.updated(mode="b", threshold=0.3).mode == "b"
    with pytest.raises(ValueError, match=r"E901\] toy: threshold"):
        settings.updated(mode="b")
    with pytest.raises(ValueError, match="E902"):
        settings.updated(nope=1)
    assert settings == ToySettings(), "updated returns a copy"


@dataclass(frozen=True)
class ListSettings(ComponentSettings):
    owner: ClassVar[str] = "lists"
    labels: Tuple[str, ...] = setting(("DATE", "TIME"), non_empty=True)
    extra: Optional[Tuple[str, ...]] = None


def test_a_tuple_of_strings_setting_takes_a_list_stores_a_tuple_and_round_trips_through_json():
    assert ListSettings.defaults() == {"labels": ["DATE", "TIME"], "extra": None}, "config and cfg hold lists"
    settings = ListSettings(labels=["MONEY"], extra=("A",))
    assert settings.labels == ("MONEY",) and settings.extra == ("A",)
    assert settings.to_dict() == {"labels": ["MONEY"], "extra": ["A"]}
    assert ListSettings(**json.loads(json.dumps(settings.to_dict()))) == settings
    assert ListSettings(labels=[]).labels == (), "an empty list is allowed: nothing is excluded"
    assert settings.updated(labels=["X", "Y"]).labels == ("X", "Y")


@pytest.mark.parametrize("value", ["DATE", ["DATE", 3], [""], None, {"DATE": 1}])
def test_a_tuple_of_strings_setting_refuses_other_values(value):
    with pytest.raises(ValueError, match=r"E901\] lists: labels must be a list of non-empty strings"):
        ListSettings(labels=value)


def test_other_tuple_annotations_are_not_supported():
    @dataclass(frozen=True)
    class IntTuple(ComponentSettings):
        sizes: Tuple[int, ...] = (1,)

    with pytest.raises(TypeError, match="E903"):
        IntTuple()
