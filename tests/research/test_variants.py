"""tl_research/variants.py: the research variants, registered in the course's registry when tl_research is
imported, build what they built inside the course (values recorded from main at 829e59d, before the move:
parameters at the defaults, the settings, a forward pass from a fixed seed); rotary attention; and a
clear error without tl_research."""

import subprocess
import sys

import pytest
import torch

import tl_research  # noqa: F401  (registers the research variants)
from tl_minimal import VARIANTS, build_model, default_config
from tl_minimal.registry import DEFAULTS, RESEARCH_VARIANTS
from tl_minimal.transformer import CausalSelfAttention
from tl_research.variants import RotaryAttention, rotary

SMALL = {"d_model": 32, "n_layers": 2, "n_heads": 4, "max_seq_len": 64}
# variant -> (parameters at the defaults with V = 259, the sum and the sum of |.| of the small model's
# logits, logits[0, -1, :3])
RECORDED = {
    "ladder": (187928, 18.803720785734185, 238.1307106469976,
              [0.0661858543753624, 0.5789705514907837, 0.11276693642139435]),
    "ladder_1": (187928, 18.81614597523003, 238.14338614608278,
                [0.06641922891139984, 0.5792607069015503, 0.11272375285625458]),
    "ladder_2": (187148, 33.260450923480676, 236.3062245631445,
                [0.08617018163204193, 0.44136396050453186, 0.08979571610689163]),
    "ladder_3": (187148, 33.31654441681894, 236.30736638535018,
                [0.08347494155168533, 0.44009318947792053, 0.08959867805242538]),
    "ladder_4": (174860, 10.867100938807198, 240.71566059482393,
                [-0.17347194254398346, 0.20742718875408173, 0.09853726625442505]),
    "ladder_5": (187196, 32.07271213051263, 235.7184093523947,
                [0.07232204079627991, 0.390325665473938, 0.04362065717577934]),
    "ladder_6": (189500, 21.82996726536294, 226.6713762262043,
                [0.07012279331684113, 0.5559017658233643, 0.03466995060443878]),
    "ladder_7": (189500, 21.825919629204236, 226.65430236085513,
                [0.07019057869911194, 0.555655837059021, 0.03449203073978424]),
    "gla_short_start": (189500, 21.795780640630255, 226.62981364667576,
                       [0.0702526867389679, 0.5548557639122009, 0.03413974493741989]),
    "transformer_rope": (166656, 27.0605003449964, 224.79267613925185,
                        [-0.1258740872144699, 0.4538734555244446, 0.023358386009931564]),
    "triple_key_shift": (187148, -0.2986363497784623, 225.88896929996736,
                        [0.017456840723752975, 0.38607943058013916, 0.004185711499303579]),
    "triple_key_current": (187148, -0.27322516842650657, 225.87542853208106,
                          [0.017855247482657433, 0.3862038552761078, 0.003969068638980389]),
    "conv_only": (206912, 5.679218274600316, 237.58248237391035,
                 [-0.05729208141565323, 0.5023111701011658, 0.1453390121459961]),
}
LADDER_3 = {"d_model": 32, "n_layers": 2, "n_heads": 4, "max_seq_len": 64, "dropout": 0.1, "state_dim": 16,
            "mode": "fast", "lam_bias": 0.0, "gam_bias": 4.0, "conv_kernel": 4, "key_source": "current",
            "write": "additive", "right_query": True, "out_norm": False, "features": "tanh", "gate_norm": 1.0}


def test_every_research_variant_is_recorded():
    assert set(RECORDED) == set(RESEARCH_VARIANTS)


def test_the_course_names_exactly_the_variants_tl_research_registers():
    # the course keeps the names only for its error message; the tests that loop over every variant read
    # RESEARCH_VARIANTS, so a variant registered but not named there would go untested
    assert set(DEFAULTS) - set(VARIANTS) == set(RESEARCH_VARIANTS)


@pytest.mark.parametrize("variant", RECORDED)
def test_the_moved_variants_build_what_they_built_in_the_course(variant):
    params, total, absolute, first = RECORDED[variant]
    assert sum(p.numel() for p in build_model(variant, 259).parameters()) == params
    x = torch.randint(0, 50, (2, 24), generator=torch.Generator().manual_seed(7))
    torch.manual_seed(0)
    model = build_model(variant, 50, **SMALL).eval()
    with torch.no_grad():
        y = model(x).double()
    assert y.sum().item() == pytest.approx(total, rel=1e-5, abs=1e-5)
    assert y.abs().sum().item() == pytest.approx(absolute, rel=1e-6)
    assert y[0, -1, :3].tolist() == pytest.approx(first, rel=1e-5, abs=1e-7)
    assert model.config.settings() == {**default_config(variant), **SMALL}
    if variant == "ladder_3":
        assert list(model.config.settings().items()) == list(LADDER_3.items())  # and their order (results files)


def test_without_tl_research_a_research_variant_says_where_it_comes_from():
    code = "from tl_minimal import build_model\nbuild_model('ladder_3', 259)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, encoding="utf-8")
    assert out.returncode != 0 and "'ladder_3' is a research variant: `import tl_research` registers it" in out.stderr


def test_the_key_source_models_parameter_counts():
    def count(variant):
        return sum(p.numel() for p in build_model(variant, 259).parameters())

    # no lambda to learn: one Linear(d -> H) fewer per layer, 3 x (64 x 4 + 4) = 780 parameters
    assert count("triple_key_shift") == count("triple_key_current") == count("triple_latent") - 780 == 187_148
    # conv_only: triple_hybrid at S = 16 without both gates, 3 x (64 x 8 + 8) = 1,560 fewer
    assert count("conv_only") == count("triple_hybrid") - 1_560 == 206_912


def _rel(a, b):
    return ((a - b).norm() / b.norm()).item()


def test_rotary_scores_depend_on_offset_only():
    # q_t . k_u after R_t, R_u depends on t - u: the same vectors at positions shifted by 7 score alike
    torch.manual_seed(2)
    q, k = torch.randn(2, 2, 5, 8, dtype=torch.float64), torch.randn(2, 2, 5, 8, dtype=torch.float64)
    scores = rotary(q, 0) @ rotary(k, 0).transpose(-2, -1)  # [2, 2, 5, 5]
    shifted = rotary(q, 7) @ rotary(k, 7).transpose(-2, -1)
    assert _rel(shifted, scores) < 1e-12
    # a rotation: norms kept, and position 0 is the identity
    assert _rel(rotary(q, 3).norm(dim=-1), q.norm(dim=-1)) < 1e-12
    assert torch.equal(rotary(q[:, :, :1], 0), q[:, :, :1])


def test_rotary_transformer_parameters_and_cache():
    # transformer_rope: the paper's baseline less its learned table of 128 x 64 positions
    model = build_model("transformer_rope", 259, d_model=64, n_layers=3, n_heads=4, max_seq_len=128)
    assert sum(p.numel() for p in model.parameters()) == 174_848 - 128 * 64
    torch.manual_seed(3)
    mixer = RotaryAttention(16, 4).double()
    n = torch.randn(2, 9, 16, dtype=torch.float64)
    whole, _ = mixer(n)
    first, cache = mixer(n[:, :4])
    rest, _ = mixer(n[:, 4:], cache)
    assert _rel(torch.cat([first, rest], 1), whole) < 1e-12
    plain = CausalSelfAttention(16, 4).double()
    plain.load_state_dict(mixer.state_dict())
    assert _rel(plain(n)[0], whole) > 1e-3  # the rotation changes the scores
    with pytest.raises(ValueError, match="even size"):
        RotaryAttention(12, 4)
