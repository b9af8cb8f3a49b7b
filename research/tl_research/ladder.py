"""The ladder's layer: one mixer whose settings are the seven choices between the triple-latent layer
and GLA (the table and the rungs: ``tl_minimal.ladder``, notebook 06b), and the language model of the
research variants ``ladder``, ``ladder_1`` .. ``ladder_7`` and ``gla_short_start`` (registered by
``tl_research.variants``; the gate-start study trains them).

Glossary (paper symbol -> code name -> shape)
    q_t, a_t, b_t, q^r_t   q, a, b, q_right   [B, T, H, S]   query (the paper's q^l), the key's and the
                                                             value's inputs, the right query
    lambda_t, gamma_t      lam, gam           [B, T, H]      keep gates of the running state and the memory
    k_t, v_t; M_t; o_t     k, v; M; o         [B, T, H, S]; [B, H, S, S]; [B, T, H, S]  (M: the paper's P_t)
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from tl_minimal.checks import (
    check_choice,
    check_form,
    check_layer_input,
    check_positive_ints,
    check_setting_types,
    check_state,
)
from tl_minimal.gla import gla, gla_step, next_past, short_conv, short_conv_step
from tl_minimal.models import LanguageModel, ModelConfig
from tl_minimal.readout import normal_init
from tl_minimal.recording import Recorder
from tl_minimal.running_state import DEFAULT_CHUNK, previous_states, running_state, running_state_step

CHOICES = {"key_source": ("state", "current"), "write": ("convex", "additive"), "features": ("tanh", "conv")}


class LadderMixer(Recorder, nn.Module):
    """One rung of the ladder: ``forward(n, state=None) -> (o, state)``, n, o [B, T, d]; state = {"M"},
    "s" with key_source="state", "conv" with features="conv"; record = {"gam"}, and "lam" with "state"."""

    def __init__(self, d_model: int, n_heads: int, state_dim: int, mode: str = "fast", gam_bias: float = 0.0,
                 lam_bias: float = 0.0, key_source: str = "state", write: str = "convex", right_query: bool = True,
                 out_norm: bool = False, features: str = "tanh", gate_norm: float = 1.0, conv_kernel: int = 4,
                 chunk_size: int = DEFAULT_CHUNK):
        super().__init__()
        check_positive_ints(d_model=d_model, n_heads=n_heads, state_dim=state_dim, conv_kernel=conv_kernel)
        for name, value in (("key_source", key_source), ("write", write), ("features", features)):
            check_choice(name, value, CHOICES[name])
        self.key, self.write, self.features = key_source, write, features
        if not gate_norm > 0:
            raise ValueError(f"gate_norm must be > 0 (1: a sigmoid gate, 16: GLA's), got {gate_norm!r}")
        self.d_model, self.n_heads, self.state_dim = d_model, n_heads, state_dim
        self.mode, self.chunk_size = check_form(mode, chunk_size)
        self.right_query, self.out_norm, self.gate_norm, self.kernel = right_query, out_norm, gate_norm, conv_kernel
        HS = n_heads * state_dim
        # (q, a, b[, q^r]) = features(W n): one Linear(d -> P*H*S), P = 3 or 4, laid out [P, H, S]
        self.pieces = 4 if right_query else 3
        self.proj = nn.Linear(d_model, self.pieces * HS, bias=False)
        if features == "conv":  # one short kernel per channel, as gla.py's
            self.conv_weight = nn.Parameter(nn.Conv1d(self.pieces * HS, self.pieces * HS, conv_kernel,
                                                      groups=self.pieces * HS, bias=False).weight.detach().squeeze(1))
        # gamma's logit, and lambda's before it when the key is the running state: Linear(d -> 1 or 2 H)
        self.gates = ("lam", "gam") if key_source == "state" else ("gam",)
        self.to_gates = nn.Linear(d_model, len(self.gates) * n_heads)
        if out_norm:  # GLA's output gate SiLU(W_g n) and per-head RMSNorm
            self.to_out_gate = nn.Linear(d_model, HS, bias=False)
            self.norm = nn.RMSNorm(state_dim, eps=1e-5)
        self.out = nn.Linear(HS, d_model, bias=False)
        for layer in filter(None, (self.proj, self.to_gates, self.out, getattr(self, "to_out_gate", None))):
            normal_init(layer)
        with torch.no_grad():  # the gates' start: lambda's bias first, gamma's last
            for i, name in enumerate(self.gates):
                self.to_gates.bias[i * n_heads:(i + 1) * n_heads] = {"lam": lam_bias, "gam": gam_bias}[name]

    def state_shapes(self, B: int) -> dict:
        H, S = self.n_heads, self.state_dim
        shapes = {"M": (B, H, S, S)}
        if self.key == "state":
            shapes["s"] = (B, H, S)
        if self.features == "conv":
            shapes["conv"] = (B, self.kernel - 1, self.pieces * H * S)
        return shapes

    def forward(self, n: torch.Tensor, state=None):
        check_layer_input(n, self.d_model)                          # input checks (checks.py)
        B, T, _ = n.shape
        H, S = self.n_heads, self.state_dim
        x = self.proj(n)                                            # [B, T, P*H*S]
        shapes = self.state_shapes(B)
        carried = dict(zip(shapes, check_state(state, shapes, x), strict=True))
        # the features: tanh(W n), or GLA's SiLU(short causal conv(W n))
        if self.features == "tanh":
            z = torch.tanh(x)                                       # [B, T, P*H*S]
        elif T == 1 and self.mode == "fast":
            z = short_conv_step(x[:, 0], next_past(x[:, :0], carried.get("conv"), self.kernel),
                                self.conv_weight)[0].unsqueeze(1)   # [B, 1, P*H*S]
        else:
            z = short_conv(x, self.conv_weight, carried.get("conv"), mode=self.mode)  # [B, T, P*H*S]
        q, a, b, *q_right = z.view(B, T, self.pieces, H, S).unbind(2)  # [B, T, H, S] each
        # lambda_t = sigmoid(W_lambda n_t + c_lambda); gamma_t = exp(logsigmoid(W_gamma n_t + c_gamma) / gate_norm)
        logits = self.to_gates(n).view(B, T, len(self.gates), H)    # [B, T, 1 or 2, H]
        gam = torch.exp(F.logsigmoid(logits[:, :, -1]) / self.gate_norm)  # [B, T, H]
        new_state = {}
        # the key: s_{t-1}, the running state before t (s_t = lambda_t s_{t-1} + (1 - lambda_t) a_t), or a_t
        if self.key == "state":
            lam = torch.sigmoid(logits[:, :, 0])                    # [B, T, H]
            s0 = carried["s"]
            if T == 1:
                s = running_state_step(a[:, 0], lam[:, 0], torch.zeros_like(a[:, 0]) if s0 is None else s0)
                s = s.unsqueeze(1)                                  # [B, 1, H, S]
            else:
                s = running_state(a, lam, s0, mode=self.mode, chunk_size=self.chunk_size)  # [B, T, H, S]
            k = previous_states(s, s0)                              # [B, T, H, S]: k_t = s_{t-1}
            new_state["s"] = s[:, -1]
        else:
            k = a                                                   # [B, T, H, S]: k_t = a_t
        # the value: (1 - gamma_t) b_t (a convex mix with the memory) or b_t (added)
        v = b * (1 - gam).unsqueeze(-1) if self.write == "convex" else b  # [B, T, H, S]
        if self.out_norm:
            q = q * S ** -0.5                                       # scaled as in attention
        # M_t = gamma_t M_{t-1} + outer(k_t, v_t), o_t = M_t^T q_t (gla.py's memory, loop or chunked)
        if T == 1:
            o, M = gla_step(carried["M"], q[:, 0], k[:, 0], v[:, 0], gam[:, 0])
            o = o.unsqueeze(1)                                      # [B, 1, H, S]
        else:
            o, M = gla(q, k, v, gam, carried["M"], self.mode, self.chunk_size)  # [B, T, H, S]
        if self.right_query:
            o = o * q_right[0]                                      # r_t = (M_t^T q_t) * q^r_t
        o = o.reshape(B, T, H * S)                                  # [B, T, H*S]
        if self.out_norm:  # W_o (RMSNorm(o_t) * SiLU(W_g n_t)), the norm per head
            o = self.norm(o.view(B, T, H, S)).reshape(B, T, H * S) * F.silu(self.to_out_gate(n))
        self.save_record(gam=gam, **({"lam": lam} if self.key == "state" else {}))
        new_state["M"] = M
        if self.features == "conv":
            new_state["conv"] = next_past(x, carried.get("conv"), self.kernel)
        return self.out(o), {key: new_state[key] for key in shapes}


@dataclass(frozen=True)
class LadderConfig(ModelConfig):
    """ModelConfig with the ladder's six choices (tl_minimal.ladder's table), checked when it is made."""

    key_source: str | None = None  # "state" or "current"
    write: str | None = None       # "convex" or "additive"
    right_query: bool | None = None
    out_norm: bool | None = None
    features: str | None = None    # "tanh" or "conv"
    gate_norm: float | None = None  # gamma = exp(logsigmoid(.) / gate_norm)

    def __post_init__(self):
        check_setting_types(self.settings(), (), ("right_query", "out_norm"), ("gate_norm",))
        for name in CHOICES:
            check_choice(name, getattr(self, name), CHOICES[name])


class LadderLM(LanguageModel):
    """ladder (rung 0) and its presets: a LadderMixer in every block, its settings read from the config."""

    config_class = LadderConfig
    SETTINGS = ("state_dim", "mode", "lam_bias", "gam_bias", "conv_kernel", "key_source", "write", "right_query",
                "out_norm", "features", "gate_norm")

    def make_mixer(self, config: LadderConfig) -> nn.Module:
        return LadderMixer(config.d_model, config.n_heads, **{name: getattr(config, name) for name in self.SETTINGS})
