"""The training-step profile's attribution (benchmarks/jcl_train_profile.py): a backward op counts for the part of
the forward op it differentiates, an absorbing part keeps the parts it calls, and the scopes leave the model as
they found it."""
import torch
from torch.profiler import ProfilerActivity, profile, record_function

from benchmarks.jcl_train_profile import OTHER, attribute, scoped


class TwoParts(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.big = torch.nn.Linear(256, 256)
        self.small = torch.nn.Linear(256, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.small(self.big(x).relu()).sum()


def profiled(model: TwoParts, x: torch.Tensor):
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        model(x).backward()
    return prof.events()


def test_forward_and_backward_ops_go_to_the_part_that_ran_them():
    torch.manual_seed(0)
    model = TwoParts()
    x = torch.randn(512, 256)
    with scoped(model.big, "forward", "big"), scoped(model.small, "forward", "small"):
        times = attribute(profiled(model, x), ["big", "small"])
    for part in ("big", "small"):
        assert times[(part, "forward")] > 0 and times[(part, "backward")] > 0, part
    # the big layer's matrix products (forward and both gradients) outweigh the small one's
    assert times[("big", "backward")] > times[("small", "backward")]
    assert (OTHER, "forward") in times  # the sum and the relu ran outside both scopes


def test_an_absorbing_part_keeps_what_it_calls():
    model = TwoParts()
    x = torch.randn(64, 256)
    with scoped(model, "forward", "outer"), scoped(model.big, "forward", "big"):
        nested = attribute(profiled(model, x), ["outer", "big"])
        absorbed = attribute(profiled(model, x), ["outer", "big"], absorbing=["outer"])
    assert nested.get(("big", "forward"), 0) > 0
    assert ("big", "forward") not in absorbed and ("big", "backward") not in absorbed
    assert absorbed[("outer", "forward")] > 0


def test_scopes_are_removed_after():
    model = TwoParts()
    before = model.big.forward
    with scoped(model.big, "forward", "big"):
        assert "forward" in vars(model.big)
    assert "forward" not in vars(model.big) and model.big.forward == before
    namespace = type("Namespace", (), {})()
    namespace.function = len
    with scoped(namespace, "function", "f"):
        with record_function("outside"):
            assert namespace.function([1, 2]) == 2
    assert namespace.function is len


def test_the_dropout_rows_split_the_masks_by_generator():
    from benchmarks.jcl_train_profile import part_rows

    rows = part_rows({}, optimizer_s=0.1, step_s=2.0, dropout_us={"bernoulli": 300_000.0, "uniform": 100_000.0},
                     steps=2, dataset="gum-train", note="")
    value = {(r["system"], r["metric"]): r["value"] for r in rows}
    assert value[("jcl_dropout_masks", "ms_per_step")] == 200.0  # (300 + 100) ms over 2 steps
    assert value[("jcl_dropout_masks_bernoulli", "ms_per_step")] == 150.0
    assert value[("jcl_dropout_masks_uniform", "ms_per_step")] == 50.0
    assert value[("jcl_dropout_masks_uniform", "share")] == 0.05  # of a 1,000 ms step
