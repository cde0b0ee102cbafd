import pytest
import torch

from benchkit import FuzzedParameter, FuzzedTensor, Fuzzer, ParameterAlias
from benchkit.errors import FuzzerError


def test_normalised_dict_distribution_is_accepted_and_unnormalised_rejected():
    p = FuzzedParameter("k", distribution={1: 0.25, 2: 0.75})
    assert p.name == "k"
    with pytest.raises(FuzzerError, match="sum to 1.5"):
        FuzzedParameter("k", distribution={1: 0.75, 2: 0.75})
    with pytest.raises(FuzzerError, match="negative"):
        FuzzedParameter("k", distribution={1: -0.5, 2: 1.5})
    with pytest.raises(FuzzerError, match="unknown distribution"):
        FuzzedParameter("k", 1, 2, distribution="normal")


def test_same_seed_same_inputs_and_constraints_hold():
    def make():
        return Fuzzer(
            parameters=[FuzzedParameter("n", 4, 1024, distribution="loguniform"),
                        FuzzedParameter("m", distribution={1: 0.5, ParameterAlias("n"): 0.5})],
            tensors=[FuzzedTensor("x", size=("n",), max_elements=512),
                     FuzzedTensor("y", size=("m",))],
            constraints=[lambda params: params["n"] % 2 == 0],
            seed=7)
    a = list(make().take(20))
    b = list(make().take(20))
    for (ta, pa, qa), (tb, pb, qb) in zip(a, b):
        assert qa == qb and torch.equal(ta["x"], tb["x"])
        assert 4 <= qa["n"] <= 512 and qa["n"] % 2 == 0
        assert qa["m"] in (1, qa["n"]) and ta["y"].numel() == qa["m"]
        assert pa["x"]["numel"] == qa["n"]
    assert {q["m"] == 1 for _, _, q in a} == {True, False}  # both branches drawn


def test_steps_and_layout():
    fuzzer = Fuzzer([FuzzedParameter("a", 2, 8, distribution="uniform")],
                    [FuzzedTensor("t", size=("a", 4), steps=(1, 2), probability_contiguous=0.0)],
                    seed=1)
    tensors, props, params = next(fuzzer.take(1))
    assert tensors["t"].shape == (params["a"], 4) and props["t"]["steps"] == (1, 2)
    assert not tensors["t"].is_contiguous()


def test_alias_cycle_and_impossible_constraints():
    with pytest.raises(FuzzerError, match="cycle"):
        next(Fuzzer([FuzzedParameter("a", distribution={ParameterAlias("b"): 1.0}),
                      FuzzedParameter("b", distribution={ParameterAlias("a"): 1.0})], [],
                     seed=0).take(1))
    f = Fuzzer([FuzzedParameter("a", 1, 3, distribution="uniform")], [],
               constraints=[lambda params: False], seed=0)
    with pytest.raises(FuzzerError, match="1000 draws"):
        next(f.take(1))
    assert f.rejection_rate == 1.0
