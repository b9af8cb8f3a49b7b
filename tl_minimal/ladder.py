"""The ladder: from the triple-latent layer to GLA, one change at a time (notebook 06b).

The triple-latent layer (readout.py) and simple GLA (gla.py) are the same memory,
M_t = gamma_t M_{t-1} + outer(k_t, v_t), o_t = M_t^T q_t, and differ in seven choices; each is a
setting of one layer, so a model can change one choice at a time. This file holds the settings; the
layer that takes them, and the research variants ``ladder_1`` .. ``ladder_7`` built from them, are in
the research package (``tl_research.ladder``).

    setting       the triple-latent layer (rung 0)         GLA (rung 7)
    gam_bias      0: gamma starts at 0.5                    0 (with gate_norm 16: 0.958)
    key           "state": k_t = s_{t-1}                    "current": k_t = a_t
    write         "convex": v_t = (1 - gamma_t) b_t         "additive": v_t = b_t
    right_query   True: o_t = (M_t^T q_t) * q^r_t           False: o_t = M_t^T q_t
    out_norm      False: W_o o_t                            True: q_t / sqrt(S), W_o (RMSNorm(o_t) * SiLU(W_g n_t))
    features      "tanh": (q, a, b) = tanh(W n_t)           "conv": SiLU(short causal conv of W n_t)
    gate_norm     1: gamma_t = sigmoid(w n_t + c)           16: gamma_t = exp(logsigmoid(w n_t + c) / 16)

The rungs (:data:`RUNGS`) change one row at a time, from the top; rung 7 is gla.py's layer and the
reverse arm :data:`GLA_SHORT_START` is GLA with gate_norm 1.
"""

from __future__ import annotations

# rung 0 is the triple-latent layer as the paper builds it; each rung changes one setting of the last
START = {"gam_bias": 0.0, "key_source": "state", "write": "convex", "right_query": True, "out_norm": False,
         "features": "tanh", "gate_norm": 1.0}
CHANGES = [("the pair gate starts long", {"gam_bias": 4.0}),
           ("the key is the written token's", {"key_source": "current"}),
           ("an additive write", {"write": "additive"}),
           ("no right query", {"right_query": False}),
           ("GLA's scale, RMSNorm and output gate", {"out_norm": True}),
           ("GLA's short convolution and SiLU", {"features": "conv"}),
           ("GLA's gate: exp(logsigmoid / 16), bias 0", {"gate_norm": 16.0, "gam_bias": 0.0})]
RUNGS: list[dict] = [dict(START)]
for _, change in CHANGES:
    RUNGS.append({**RUNGS[-1], **change})
# the reverse arm: GLA (rung 7) with its gate normaliser 1, so its gate starts at 0.5 like the paper's
GLA_SHORT_START = {**RUNGS[7], "gate_norm": 1.0}
