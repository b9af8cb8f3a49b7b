"""Every variant, the research package's registered ones too: causal, step-by-step equals the whole pass,
generation, internals, errors."""

import pickle

import pytest
import torch

import tl_minimal
import tl_research  # noqa: F401  (registers the research variants, RESEARCH_VARIANTS: tested here as the course's)
from tl_minimal import VARIANTS, build_model, default_config
from tl_minimal.models import ModelConfig
from tl_minimal.registry import DEFAULTS, RELATIVES, RESEARCH_VARIANTS

ALL = (*VARIANTS, *RESEARCH_VARIANTS)

V = 50
TINY = {"d_model": 32, "n_layers": 2, "n_heads": 4, "state_dim": 8, "num_slots": 4, "max_seq_len": 64,
        "assoc_dim": 16, "top_k": 4}

# the paper's variants (docs/paper.md section 3), in its order
PAPER = ("transformer", "triple_latent", "triple_slot", "triple_hybrid", "transformer_plus_triple",
         "gated_hybrid_repaired")


def is_gated_hybrid(variant: str) -> bool:
    """A variant with the key-value memory (its settings include the memory's width)."""
    return "assoc_dim" in default_config(variant)


def tiny(variant, **extra):
    """A small float64 model in eval mode (dropout off), with only the settings it knows."""
    allowed = default_config(variant)
    cfg = {k: v for k, v in TINY.items() if k in allowed}
    cfg.update(extra)
    torch.manual_seed(0)
    return build_model(variant, V, **cfg).double().eval()


def _rel(a, b):
    return ((a - b).norm() / b.norm().clamp_min(1e-30)).item()


def _tokens(B=2, T=13, seed=0):
    return torch.randint(0, V, (B, T), generator=torch.Generator().manual_seed(seed))


def _distinct_tokens(B=2, T=13, seed=0):
    """No token twice in a row of the batch. A repeated token repeats its key in the gated
    memory: equal scores at the top-k boundary may keep different (equally good) entries when
    the sizes of the computation differ (cache vs whole pass, loop vs batched)."""
    g = torch.Generator().manual_seed(seed)
    return torch.stack([torch.randperm(V, generator=g)[:T] for _ in range(B)])


def test_variant_list():
    # the paper's variants first, in its order, then its gated run's two presets; the family after
    # them is the relatives (RELATIVES: a new one needs no edit here); then what tl_research registers
    assert VARIANTS[:8] == (*PAPER, "gated_hybrid_paper", "gated_hybrid_printed")
    assert VARIANTS[8:] == tuple(RELATIVES) and {"gla", "h3", "deltanet"} <= set(RELATIVES)
    assert tuple(DEFAULTS) == ALL and len(set(ALL)) == len(ALL)
    assert tl_minimal.get_device("cpu").type == "cpu"


@pytest.mark.parametrize("variant", ALL)
def test_causal(variant):
    model = tiny(variant)
    x = _tokens()
    logits = model(x)
    assert logits.shape == (2, 13, V) and logits.dtype == torch.float64
    for t in (0, 5, 11):
        y = x.clone()
        y[:, t + 1 :] = (y[:, t + 1 :] + 7) % V
        assert torch.equal(model(y)[:, : t + 1], logits[:, : t + 1]), f"position <= {t} saw the future"


@pytest.mark.parametrize("variant", ALL)
def test_step_and_chunks_equal_whole_pass(variant):
    model = tiny(variant)
    x = _tokens(T=12)
    if is_gated_hybrid(variant):
        x = _distinct_tokens(T=12)
    whole = model(x)
    state = model.init_state(2)
    steps = []
    for t in range(12):
        out, state = model.step(x[:, t], state)
        steps.append(out)
    assert _rel(torch.stack(steps, 1), whole) < 1e-10
    assert state["t"] == 12
    first, st = model.run(x[:, :5])
    rest, st = model.run(x[:, 5:], st)  # several tokens continuing a state
    assert _rel(torch.cat([first, rest], 1), whole) < 1e-10


@pytest.mark.parametrize("variant", [v for v in ALL if "mode" in default_config(v)])
def test_loop_mode_equals_chunked(variant):
    fast, loop = tiny(variant), tiny(variant, mode="loop")
    loop.load_state_dict(fast.state_dict())
    x = _distinct_tokens(T=20) if is_gated_hybrid(variant) else _tokens(T=20)
    assert _rel(loop(x), fast(x)) < 1e-10


@pytest.mark.parametrize("variant", ALL)
def test_every_model_pickles(variant):
    # a model class is a module-level name (pickle finds it by name: a spawned process, torch.save(model))
    model = tiny(variant)
    x = _tokens(T=6)
    assert torch.equal(pickle.loads(pickle.dumps(model))(x), model(x))


@pytest.mark.parametrize("variant", ALL)
def test_generate(variant):
    model = tiny(variant)
    prompt = _tokens(B=3, T=4)

    def g():
        return torch.Generator().manual_seed(123)

    a = model.generate(prompt, 6, temperature=0.8, top_k=5, generator=g())
    b = model.generate(prompt, 6, temperature=0.8, top_k=5, generator=g())
    assert a.shape == (3, 10) and a.dtype == torch.long and torch.equal(a, b)
    assert torch.equal(a[:, :4], prompt) and int(a.max()) < V
    one = model.generate(prompt[0], 3, temperature=0)  # 1-D prompt, greedy
    assert one.shape == (7,)
    # greedy generation picks the argmax of the full forward pass at every position
    assert torch.equal(model(one[None, :-1]).argmax(-1)[0, 3:], one[4:])
    with pytest.raises(ValueError, match="max_seq_len"):
        model.generate(prompt, 61)


@pytest.mark.parametrize("variant", ALL)
def test_internals(variant):
    model = tiny(variant)
    x = _tokens(B=2, T=9)
    logits, info = model.internals(x, snapshot_at=(0, 8), attention=True)
    assert _rel(logits, model(x)) < 1e-12  # explicit attention weights: same numbers
    assert len(info["layers"]) == 2
    layer = info["layers"][0]
    if variant in ("transformer", "transformer_plus_triple", "transformer_rope"):
        assert layer["attn"].shape == (2, 4, 9, 9)
    elif variant in RELATIVES:  # a relative records its own gates (which: its own test file)
        assert layer and all(isinstance(v, torch.Tensor) for v in layer.values())
    elif default_config(variant).get("key_source") == "current":  # a ladder rung without lambda
        assert set(layer) == {"gam"} and layer["gam"].shape == (2, 9, 4)
    else:
        assert layer["lam"].shape == (2, 9, 4) and layer["gam"].shape == (2, 9, 4)
    if variant == "triple_latent":
        assert set(layer["P"]) == {0, 8} and layer["P"][8].shape == (2, 4, 8, 8)
    if variant == "triple_slot":
        assert layer["slot_weights"].shape == (2, 9, 4, 4)
    if "hybrid" in variant:
        assert info["conv"]["update"].shape == (2, 9, 32)
    if is_gated_hybrid(variant):
        r = info["retrieval"]
        assert r["weights"].shape == (2, 9, 4) and r["index"].shape == (2, 9, 4)
        assert r["read_gate"].shape == (2, 9)
        assert torch.all(r["index"][:, :2] == -1)  # "previous": no entries before t = 2
    if variant == "transformer_plus_triple":
        assert info["side"]["lam"].shape == (2, 9, 4)


def test_parameter_counts_at_paper_defaults():

    def count(m):
        return sum(p.numel() for p in m.parameters())

    assert count(build_model("transformer", 259)) == 174_848
    assert count(build_model("triple_hybrid", 259, state_dim=8)) == 177_752  # the paper's figure
    # the gated paper row = triple_hybrid (S=8) + W_k, W_v, W_q (3 x 64 x 64) + read gate 65 + LN 128
    assert count(build_model("gated_hybrid_paper", 259)) == 177_752 + 3 * 64 * 64 + 65 + 128
    # the printed read gate is W_g: D_kv -> D_kv with a bias (64 x 64 + 64) instead of w_g, b_g (65)
    assert count(build_model("gated_hybrid_printed", 259)) == 177_752 + 3 * 64 * 64 + 64 * 64 + 64 + 128


def test_conv_leak_at_model_level():
    leaky = tiny("triple_hybrid", conv_causal=False)
    x = _tokens(B=1, T=10)
    y = x.clone()
    y[0, 6] = (y[0, 6] + 1) % V
    assert (leaky(x)[0, 5] - leaky(y)[0, 5]).abs().max() > 1e-6  # position 5 saw token 6
    with pytest.raises(NotImplementedError, match="no step form"):
        leaky.generate(x[0, :3], 2)
    with pytest.raises(NotImplementedError, match="no step form"):
        leaky.init_state(1)


@pytest.mark.parametrize("variant", ["transformer", "gated_hybrid_repaired"])
def test_bad_tokens(variant):
    model = tiny(variant)
    with pytest.raises(TypeError, match=r"torch\.long"):
        model(torch.zeros(1, 4))
    with pytest.raises(TypeError, match=r"torch\.long"):
        model(torch.zeros(1, 4, dtype=torch.int32))
    with pytest.raises(ValueError, match=r"\[0, 50\).*\[-1, 3\]"):
        model(torch.tensor([[0, -1, 3]]))
    with pytest.raises(ValueError, match=r"\[0, 50\)"):
        model(torch.tensor([[0, 50]]))
    with pytest.raises(ValueError, match="max_seq_len"):
        model(torch.zeros(1, 65, dtype=torch.long))
    with pytest.raises(ValueError, match=r"\[B, T\]"):
        model(torch.zeros(4, dtype=torch.long))
    with pytest.raises(ValueError, match=r"token \[B\]"):
        model.step(torch.zeros(2, 1, dtype=torch.long), model.init_state(2))
    state = model.run(torch.zeros(1, 60, dtype=torch.long))[1]
    with pytest.raises(ValueError, match=r"positions 60\.\.64 exceed"):
        model.run(torch.zeros(1, 5, dtype=torch.long), state)
    with pytest.raises(ValueError, match="batch size"):
        model.run(torch.zeros(2, 1, dtype=torch.long), state)


def test_bad_configs():
    with pytest.raises(ValueError, match=r"unknown variant 'gpt'.*transformer, triple_latent"):
        build_model("gpt", V)
    with pytest.raises(ValueError, match=r"no setting.*'state_dim'.*allowed: d_model"):
        build_model("transformer", V, state_dim=8)
    with pytest.raises(ValueError, match="divisible"):
        build_model("triple_latent", V, d_model=30, n_heads=4)
    with pytest.raises(ValueError, match="d_model must be a positive int"):
        build_model("transformer", V, d_model=0)
    with pytest.raises(ValueError, match="n_layers must be a positive int"):
        build_model("transformer", V, n_layers=2.5)
    with pytest.raises(ValueError, match=r"dropout must be a number in \[0, 1\)"):
        build_model("transformer", V, dropout=1.0)
    with pytest.raises(ValueError, match="mode must be one of"):
        build_model("triple_latent", V, mode="chunked")
    with pytest.raises(ValueError, match="top_k"):
        build_model("gated_hybrid_repaired", V, top_k=0)
    with pytest.raises(ValueError, match="query_align"):
        build_model("gated_hybrid_repaired", V, query_align="next")
    with pytest.raises(ValueError, match="vocab_size"):
        build_model("transformer", 0)


def test_resolved_config_and_attributes():
    model = build_model("gated_hybrid_repaired", 259, top_k="all", query_align="current")
    assert model.variant == "gated_hybrid_repaired" and model.vocab_size == 259
    assert isinstance(model.config, ModelConfig) and model.config.variant == "gated_hybrid_repaired"
    assert model.config.kv.top_k == "all" and model.config.state_dim == 8
    assert model.config.settings() == {**default_config("gated_hybrid_repaired"), "top_k": "all",
                                       "query_align": "current"}
    x = torch.randint(0, 259, (2, 16))
    assert torch.isfinite(model(x)).all()


@pytest.mark.parametrize("variant", ALL)
def test_training_pass_has_finite_gradients(variant):
    model = tiny(variant).float().train()  # dropout on, float32 as in training
    x = _tokens(T=16)
    logits = model(x[:, :-1])
    loss = torch.nn.functional.cross_entropy(logits.reshape(-1, V), x[:, 1:].reshape(-1))
    loss.backward()
    grads = [p.grad for p in model.parameters() if p.requires_grad]
    assert all(g is not None and torch.isfinite(g).all() for g in grads)


@pytest.mark.parametrize("extra", [{"query_align": "current", "write_gate": True},
                                   {"top_k": "all", "learnable_score_scale": True, "gate_outside_norm": True}])
def test_gated_options_stay_causal_and_steppable(extra):
    model = tiny("gated_hybrid_repaired", **extra)
    x = _tokens(T=10)
    whole = model(x)
    y = x.clone()
    y[:, 6:] = (y[:, 6:] + 3) % V
    assert torch.equal(model(y)[:, :6], whole[:, :6])
    state, steps = model.init_state(2), []
    for t in range(10):
        out, state = model.step(x[:, t], state)
        steps.append(out)
    assert _rel(torch.stack(steps, 1), whole) < 1e-10


def test_the_old_setting_names_are_errors_since_2_0():
    # temperature / learnable_temperature became score_scale / learnable_score_scale in 1.x; 2.0 reads
    # only the new names (python -m tl_research.convert renames them in a 1.x checkpoint)
    with pytest.raises(ValueError, match=r"no setting.*'temperature'"):
        build_model("gated_hybrid_repaired", V, temperature=3.0)
    assert "temperature" not in default_config("gated_hybrid_repaired")


def test_the_paper_configurations_are_named_presets_of_gated_hybrid():
    from tl_minimal.registry import GATED_PAPER, GATED_PRINTED, PRESETS, model_class, model_config

    assert {name: PRESETS[name] for name in VARIANTS if name in PRESETS} == {
        "gated_hybrid_paper": ("gated_hybrid_repaired", GATED_PAPER),
        "gated_hybrid_printed": ("gated_hybrid_repaired", GATED_PRINTED)}  # and the ladder's rungs, registered
    for name, (base, fixed) in PRESETS.items():
        config = model_config(name, 64)
        assert isinstance(config, ModelConfig) and config.variant == name
        assert model_class(name) is model_class(base)
        # the variant with the fixed settings
        assert config.settings() == model_config(base, 64, **fixed).settings()
        assert build_model(name, 64).config == config


@pytest.mark.parametrize("variant", ["transformer", "triple_latent", "gated_hybrid_repaired", "gla"])
def test_init_fan_in_is_an_optional_setting_of_every_variant(variant):
    """init="fan_in": embeddings N(0, 1/d) and PyTorch's Linear default instead of the reference's N(0, 0.02);
    absent unless given, so the settings of results written before it are unchanged."""
    torch.manual_seed(0)
    paper, fan_in = build_model(variant, V), build_model(variant, V, init="fan_in")
    assert "init" not in paper.config.settings() and fan_in.config.settings()["init"] == "fan_in"
    assert abs(paper.embed.weight.std().item() - 0.02) < 0.002
    assert abs(fan_in.embed.weight.std().item() - 64 ** -0.5) < 0.01
    ffn = next(m for m in fan_in.blocks[0].ffn.modules() if isinstance(m, torch.nn.Linear))
    assert ffn.weight.abs().max() <= ffn.in_features ** -0.5 and ffn.weight.std() > 0.03  # U(+-1/sqrt(fan_in))
    assert torch.isfinite(fan_in(_tokens())).all()
    assert build_model(variant, V, init="paper").config.settings()["init"] == "paper"
    with pytest.raises(ValueError, match="init must be one of 'paper', 'fan_in'"):
        build_model(variant, V, init="xavier")


def test_init_fan_in_reaches_the_transformer_attention():
    torch.manual_seed(0)
    qkv = build_model("transformer", V, init="fan_in").blocks[0].mixer.qkv
    assert qkv.weight.std() > 0.05 and qkv.bias.abs().max() > 0  # the default, not N(0, 0.02) and zero bias


def test_fan_in_all_gives_the_mixers_pytorchs_scale_and_keeps_the_gate_start():
    torch.manual_seed(0)
    paper = build_model("triple_latent", V, init="fan_in", gam_bias=4.0)
    torch.manual_seed(0)
    every = build_model("triple_latent", V, init="fan_in_all", gam_bias=4.0)
    w_paper, w_every = paper.blocks[0].mixer.proj.weight, every.blocks[0].mixer.proj.weight
    assert abs(w_paper.std().item() - 0.02) < 0.002                 # the reference's N(0, 0.02)
    bound = w_every.shape[1] ** -0.5                                 # U(+-1/sqrt(fan_in)): std bound / sqrt(3)
    assert w_every.abs().max() <= bound and abs(w_every.std().item() - bound / 3 ** 0.5) < 0.01
    gates = every.blocks[0].mixer.to_gates.bias
    assert torch.equal(gates[4:], torch.full((4,), 4.0)) and torch.equal(gates[:4], torch.zeros(4))
    with pytest.raises(ValueError, match="init must be one of 'paper', 'fan_in', 'fan_in_all'"):
        build_model("triple_latent", V, init="xavier")


def test_the_old_name_of_the_repaired_hybrid_is_refused_with_its_new_name():
    """Issue 52: the repaired hybrid is not the paper's model, so it lost the paper's bare name."""
    expected = r"now called 'gated_hybrid_repaired'.*'gated_hybrid_paper'.*tl_research\.convert"
    with pytest.raises(ValueError, match=expected):
        build_model("gated_hybrid", V)  # its old name
