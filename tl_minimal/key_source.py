"""An ablation of the triple-latent layer: where the pair memory's key comes from, and the layer
with no memory at all.

Glossary (paper symbol -> code name -> shape)
    n_t            n              [B, T, d]        LayerNormed input of the layer
    a_t = tanh(W_a n_t)   a       [B, T, H, S]     what token t writes into the running state
    key_tau        (s_prev)       [B, T, H, S]     the key the pair memory pairs with b_tau
    lambda_t, gamma_t  lam, gam   [B, T, H]        keep gates of the running state and of the memory

P_t = gamma_t P_{t-1} + (1 - gamma_t) outer(key_t, b_t), with key_t = s_{t-1} (key_source "state",
the paper's), a_{t-1} ("shift", a token shift as in RWKV: lambda = 0) or a_t ("current", as in GLA
and Mamba-2); ``memory=False`` fixes gamma = 0 (``conv_only``). A fixed gate is zeros passed into the
triple-latent layer's own functions, so the loop, fast and step forms stay the course's.
"""

from __future__ import annotations

import torch
from torch import nn

from .checks import check_mixer_call
from .readout import TripleLatentMixer, normal_init, pair_readout, pair_readout_step
from .running_state import DEFAULT_CHUNK

KEY_SOURCES = ("state", "shift", "current")


class KeySourceMixer(TripleLatentMixer):
    """The triple-latent mixer with the key ``key_source`` (KEY_SOURCES) and, with ``memory=False``,
    gamma = 0. ``forward(n, state=None) -> (o, state)``; state = {"s": [B, H, S], "P": [B, H, S, S]}
    (for "shift" and "current" s_t = a_t, the token's own write); record as TripleLatentMixer's."""

    def __init__(self, d_model: int, n_heads: int, state_dim: int, key_source: str = "state",
                 memory: bool = True, mode: str = "fast", lam_bias: float = 0.0, gam_bias: float = 0.0,
                 chunk_size: int = DEFAULT_CHUNK):
        super().__init__(d_model, n_heads, state_dim, mode=mode, chunk_size=chunk_size)
        if key_source not in KEY_SOURCES:
            raise ValueError(f"key_source must be one of {', '.join(KEY_SOURCES)}, got {key_source!r}")
        self.key_source, self.memory = key_source, memory
        # only the gates this form learns: lambda for the running-state key, gamma with a memory
        self.learned = [name for name, used in (("lam", key_source == "state"), ("gam", memory)) if used]
        self.to_gates = nn.Linear(d_model, len(self.learned) * n_heads) if self.learned else None
        if self.to_gates is not None:
            normal_init(self.to_gates)
            with torch.no_grad():
                for i, name in enumerate(self.learned):
                    self.to_gates.bias[i * n_heads:(i + 1) * n_heads] = {"lam": lam_bias, "gam": gam_bias}[name]

    def project(self, n: torch.Tensor):
        """As TripleLatentMixer.project; a gate this form does not learn is exactly 0."""
        B, T, H, S = *n.shape[:2], self.n_heads, self.state_dim
        z = torch.tanh(self.proj(n)).view(B, T, 4, H, S).permute(2, 0, 3, 1, 4).contiguous()  # [4, B, H, T, S]
        a, b, ql, qr = z.transpose(2, 3).unbind(0)                  # 4 x [B, T, H, S], heads-first in memory
        gates = dict.fromkeys(("lam", "gam"), a.new_zeros(a.shape[:3]))  # [B, T, H] each
        if self.to_gates is not None:
            gates.update(zip(self.learned, torch.sigmoid(self.to_gates(n)).chunk(len(self.learned), dim=-1),
                             strict=True))
        return a, b, ql, qr, gates["lam"], gates["gam"]

    def forward(self, n: torch.Tensor, state=None):
        if self.key_source != "current":  # "state", or "shift" = the same layer with lambda = 0
            return super().forward(n, state)
        H, S = self.n_heads, self.state_dim                         # s_{-1} is not read: the key is a_t
        _, P0 = check_mixer_call(n, state, self.d_model, self.mode, self.chunk_size,
                                 {"s": (H, S), "P": (H, S, S)}, "'s' [B, H, S] and 'P' [B, H, S, S]")
        a, b, ql, qr, _, gam = self.project(n)                      # [B, T, H, S] x4, [B, T, H]
        B, T = a.shape[:2]
        # P_t = gamma_t P_{t-1} + (1 - gamma_t) outer(a_t, b_t): the pair readout with key a_t
        if T == 1:  # generation: one step
            r_t, P_last = pair_readout_step(P0, a[:, 0], b[:, 0], gam[:, 0], ql[:, 0], qr[:, 0])
            r = r_t.unsqueeze(1)                                    # [B, 1, H, S]
        else:
            r, P_last = pair_readout(a, b, gam, ql, qr, P0, mode=self.mode, return_state=True,
                                     chunk_size=self.chunk_size)    # [B, T, H, S]
        return self.out(r.reshape(B, T, H * S)), {"s": a[:, -1], "P": P_last}

    @torch.no_grad()
    def recorded(self, n: torch.Tensor, state=None) -> dict:
        """As TripleLatentMixer.recorded; for key_source "current" {"lam", "gam", "s": a} (no P_t)."""
        if self.key_source != "current":
            return super().recorded(n, state)
        a, _, _, _, lam, gam = self.project(n)
        return {"lam": lam, "gam": gam, "s": a}
