"""The paper's two protocols as dataclasses: every hyperparameter of a run, in one place, recorded in results.

    lm = protocol("lm")                       # byte-level WikiText-2: 80 steps of 16 x 128 bytes
    rp = protocol("recall", steps=500)         # associative recall: 4 pairs, one question

One configuration story: a protocol is the model's sizes (their defaults are the registry's,
``registry.COMMON``), the run's length and seeds, the training loop's own
:class:`~tl_minimal.training.train.TrainConfig` (field ``train``: lr, weight decay, AdamW betas,
clipping, warmup, schedule; defaults and checks live there, once), and the task's data and
evaluation fields (the subclasses). ``p.lr`` reads ``p.train.lr``; ``protocol("lm", lr=1e-3)``
and ``--protocol lr=1e-3`` change it; :meth:`Protocol.to_dict` records it flat, beside the others.

The research code adds the studies' protocols (``tl_research.protocols``). docs/paper.md
section 4 gives most numbers; where the paper is silent the value chosen here is
listed in the protocol's ``assumed`` field, so a reader of the results sees which is which.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import torch

from ..data import text as data_text
from ..data.recall import LengthCurriculum, RecallLayout, eval_set, layout_for, min_seq_len, scaled_length
from ..registry import COMMON
from .train import TrainConfig

MODEL_KEYS = ("d_model", "n_layers", "n_heads", "dropout")  # + max_seq_len = seq_len
# the TrainConfig fields a protocol fixes and records (the others, device, checkpoints, ..., belong to a run)
TRAIN_KEYS = ("lr", "weight_decay", "betas", "grad_clip", "warmup_steps", "lr_schedule")


@dataclass
class Protocol:
    """Fields shared by every task. ``model_config()`` is what goes to ``build_model``,
    ``train_config()`` what goes to ``train``."""

    task: str = ""
    metric: str = ""
    vocab_size: int = 259
    # model: the registry's defaults (the paper's byte-level model)
    d_model: int = COMMON["d_model"]
    n_layers: int = COMMON["n_layers"]
    n_heads: int = COMMON["n_heads"]
    dropout: float = COMMON["dropout"]
    seq_len: int = COMMON["max_seq_len"]
    # the run: batches of batch_size sequences, steps of them, once per seed
    batch_size: int = 16
    steps: int = 80
    # AdamW, constant lr with optional linear warmup, gradient clipping; optional cosine decay
    train: TrainConfig = field(default_factory=TrainConfig)  # its defaults: the paper's
    seeds: tuple = (0,)
    assumed: tuple = ()

    def __post_init__(self):
        self.train.check()  # warmup_steps and lr_schedule: ValueError saying what is expected

    def __getattr__(self, name):
        """``p.lr`` and the other :data:`TRAIN_KEYS`: read from ``p.train``."""
        if name in TRAIN_KEYS:
            return getattr(self.train, name)
        raise AttributeError(f"{type(self).__name__} has no attribute {name!r}")

    def __setattr__(self, name, value):
        if name in TRAIN_KEYS:  # an attribute beside p.train would be ignored by training and by to_dict
            raise AttributeError(f"{name} is a field of the protocol's train config: "
                                 f"p.replace({name}=...) or p.train.{name} = ...")
        super().__setattr__(name, value)

    def model_config(self, overrides: dict | None = None, allowed=None) -> dict:
        """Keyword arguments for ``build_model``: the protocol's model fields, then ``overrides``.

        Settings the protocol does not fix (state size, slots, conv kernel, ...) stay at the
        variant's registry default (S = 16, and 8 for the gated hybrid, as in the paper).
        ``allowed`` (the variant's setting names) drops overrides the variant does not have.
        """
        config = {k: getattr(self, k) for k in MODEL_KEYS}
        config["max_seq_len"] = self.seq_len
        config.update({k: v for k, v in (overrides or {}).items() if allowed is None or k in allowed})
        return config

    def train_config(self, **changes) -> TrainConfig:
        """The training loop's :class:`~tl_minimal.training.train.TrainConfig`: this protocol's optimizer
        settings (lr, weight decay, AdamW betas, clipping, warmup, schedule), then ``changes`` (device, ...)."""
        return dataclasses.replace(self.train, **changes)

    def replace(self, **changes) -> Protocol:
        """A copy with ``changes`` (None values ignored); :data:`TRAIN_KEYS` go to the ``train`` config."""
        changes = {k: v for k, v in changes.items() if v is not None}
        train = {k: changes.pop(k) for k in TRAIN_KEYS if k in changes}
        return dataclasses.replace(self, train=dataclasses.replace(self.train, **train), **changes)

    def to_dict(self) -> dict:
        """Every field, ``train`` as its :data:`TRAIN_KEYS` in its place, except the optional ones
        (:data:`UNSET_OMITTED`) that are off: a results file written before such a field existed
        has the same settings as one written now without it."""
        out = {}
        for k, v in dataclasses.asdict(self).items():
            out.update({t: v[t] for t in TRAIN_KEYS} if k == "train" else {k: v})
        if out["lr_schedule"] == "constant":  # the paper's, recorded as absent
            out["lr_schedule"] = None
        return {k: v for k, v in out.items() if not (k in UNSET_OMITTED and v is None)}

    @classmethod
    def field_names(cls) -> tuple:
        """The fields ``--protocol KEY=VALUE`` may change (all but task, metric and assumed; ``train``
        as its :data:`TRAIN_KEYS`), in the order :meth:`to_dict` records them."""
        names = [TRAIN_KEYS if f.name == "train" else (f.name,) for f in dataclasses.fields(cls)]
        return tuple(n for group in names for n in group if n not in ("task", "metric", "assumed"))


@dataclass
class LMProtocol(Protocol):
    """Byte-level WikiText-2 (docs/paper.md section 4.1): 80 steps of 16 random 128-byte windows."""

    task: str = "lm"
    metric: str = "bpb"
    eval_split: str = "validation"
    eval_batches: int | None = 128  # first 128 batches of non-overlapping chunks; None = whole split
    eval_batch_size: int = 16  # defines which chunks "the first N batches" are
    assumed: tuple = (
        "AdamW betas (0.9, 0.999) (PyTorch defaults)",
        "eval chunks in text order",
        "state size and other variant settings: the registry defaults (S=16; gated S=8)",
    )


@dataclass
class RecallProtocol(Protocol):
    """The paper's associative recall: 4 pairs, one question at the last position."""

    task: str = "recall"
    metric: str = "accuracy"
    vocab_size: int = 64
    batch_size: int = 32
    steps: int = 200  # main table; the seed study uses 500
    train: TrainConfig = field(default_factory=lambda: TrainConfig(weight_decay=0.01))
    n_pairs: int = 4
    n_queries: int = 1
    eval_examples: int = 2048
    # (start, end, steps): training sequences grow from start to end tokens over the first steps
    # steps (data/recall.py LengthCurriculum); None: every batch seq_len long. The paper's retrain
    # recipe: --protocol length_curriculum=32:128:150 (with warmup_steps=50, --set read_gate_bias=-2)
    length_curriculum: tuple | None = None
    # True: the token after each ANSWER is filler, not the answer (Zoology's MQAR form; closes the
    # elimination shortcut of showing earlier answers, data/recall.py); None: shown, as in the paper
    hide_answers: bool | None = None
    # True: each label sits on the asked key instead of the ANSWER token after it (Zoology's labels)
    answer_at_key: bool | None = None
    # how many key ids (and as many value ids) the pairs are drawn from; None: max(8, n_pairs), the
    # paper's layout (data/recall.py layout_for). More ids than pairs leave values out of each context
    key_ids: int | None = None
    # pair counts cycled over the training batches (Zoology trains MQAR on such a pool), e.g. 4:8:16;
    # each batch asks min(n_queries, P) of its P pairs; the evaluation keeps n_pairs. None: n_pairs always
    pairs_mix: tuple | None = None
    # "scaled": a pooled batch of P pairs is ceil(seq_len * P / n_pairs) tokens long (the evaluated
    # density of pairs, as Zoology's pool puts fewer pairs in shorter sequences); None: seq_len long
    mix_lengths: str | None = None
    assumed: tuple = (
        "grad clip 1.0 and dropout 0.1 as in the byte-level protocol",
        "model d=64, 3 layers, 4 heads, registry defaults otherwise (the byte-level model)",
        "keys distinct and values distinct within a sequence",
    )

    def __post_init__(self):
        super().__post_init__()
        for name in ("hide_answers", "answer_at_key"):
            value = getattr(self, name)
            if value is None:
                continue
            if not isinstance(value, bool):
                raise ValueError(f"{name} must be true or false, got {value!r}")
            if self.task not in CURRICULUM_TASKS:
                raise ValueError(f"{name}: the {self.task} task has its own sequences; hiding the answers or "
                                 f"moving the labels applies to {' and '.join(CURRICULUM_TASKS)}")
        if self.key_ids is not None:
            if self.task not in CURRICULUM_TASKS:
                raise ValueError(f"key_ids: the {self.task} task has its own layout; drawing the pairs from more "
                                 f"ids applies to {' and '.join(CURRICULUM_TASKS)}")
            if isinstance(self.key_ids, bool) or not isinstance(self.key_ids, int) or self.key_ids < self.n_pairs:
                raise ValueError(f"key_ids must be a whole number >= n_pairs = {self.n_pairs}, got {self.key_ids!r}")
        if self.pairs_mix is not None:
            self.pairs_mix = self.parse_pairs_mix(self.pairs_mix)
        if self.mix_lengths is not None:
            if self.pairs_mix is None or self.mix_lengths not in ("full", "scaled"):
                raise ValueError(f"mix_lengths must be full or scaled, with a pairs_mix; got {self.mix_lengths!r}"
                                 f"{'' if self.pairs_mix else ' without a pairs_mix'}")
        if self.length_curriculum is None:
            return
        if self.pairs_mix is not None:
            raise ValueError("pairs_mix and length_curriculum together are not supported: choose one")
        if self.task not in CURRICULUM_TASKS:
            raise ValueError(f"length_curriculum: the {self.task} task has its own sequences; "
                             f"a length curriculum applies to {' and '.join(CURRICULUM_TASKS)}")
        c = LengthCurriculum.parse(self.length_curriculum)
        if c.end > self.seq_len:
            raise ValueError(f"length_curriculum: end {c.end} is longer than the task's seq_len {self.seq_len}; "
                             "the curriculum ends at most at the evaluated length "
                             f"(e.g. {c.start}:{self.seq_len}:{c.steps})")
        shortest = min_seq_len(self.n_pairs, self.n_queries)
        if c.start < shortest:
            raise ValueError(f"length_curriculum: start {c.start} is too short for {self.n_pairs} pairs and "
                             f"{self.n_queries} question(s); the shortest sequence is {shortest}")
        self.length_curriculum = c.as_tuple()

    def parse_pairs_mix(self, value) -> tuple:
        """``"4:8:16"`` or ``(4, 8, 16)`` -> (4, 8, 16), each a pair count the layout and length hold."""
        if self.task not in CURRICULUM_TASKS:
            raise ValueError(f"pairs_mix: the {self.task} task has its own sequences; a pool of pair counts "
                             f"applies to {' and '.join(CURRICULUM_TASKS)}")
        parts = value.split(":") if isinstance(value, str) else value
        try:
            mix = tuple(int(w) if isinstance(w, str) else w for w in parts)
        except (TypeError, ValueError):
            mix = ()
        ok = mix and all(isinstance(p, int) and not isinstance(p, bool) for p in mix)
        if not ok or not all(1 <= p <= self.n_pairs for p in mix):
            raise ValueError(f"pairs_mix: expected pair counts in 1..n_pairs = {self.n_pairs} separated by colons, "
                             f"e.g. 4:8:{self.n_pairs}, got {value!r}")
        for p in mix:  # the shortest batch of each pool entry must hold its pairs and questions
            length = scaled_length(self.seq_len, p, self.n_pairs) if self.mix_lengths == "scaled" else self.seq_len
            if length < min_seq_len(p, min(self.n_queries, p)):
                raise ValueError(f"pairs_mix: {p} pairs in {length} tokens do not fit; the shortest sequence for "
                                 f"them is {min_seq_len(p, min(self.n_queries, p))}")
        return mix

    def sequence_options(self) -> dict:
        """How the recall sequences are drawn beyond their sizes (data/recall.py: mqar_batch's switches)."""
        return {"hide_answers": bool(self.hide_answers), "answer_at_key": bool(self.answer_at_key)}

    def layout(self) -> RecallLayout:
        """Where keys, values and filler live in the vocabulary for this many pairs (data/recall.py)."""
        return layout_for(self.n_pairs, self.key_ids)

    def eval_set(self, seed: int):
        """The fresh examples that score training seed ``seed``: ``eval_examples`` sequences of this
        protocol's sizes, layout and switches, drawn from the seed's evaluation stream -> (x, y) [N, T]."""
        return eval_set(self.eval_examples, seed, n_queries=self.n_queries, n_pairs=self.n_pairs,
                        seq_len=self.seq_len, layout=self.layout(), **self.sequence_options())

    def curriculum(self) -> LengthCurriculum | None:
        """The training batches' :class:`~tl_minimal.data.recall.LengthCurriculum`, or None."""
        return None if self.length_curriculum is None else LengthCurriculum.parse(self.length_curriculum)


CURRICULUM_TASKS = ("recall", "mqar")  # the tasks whose sequences may follow a length curriculum or hide answers
# optional fields left out of to_dict() while None
UNSET_OMITTED = ("length_curriculum", "lr_schedule", "hide_answers", "answer_at_key", "key_ids", "pairs_mix",
                 "mix_lengths")

PAPER_PROTOCOLS = {p.task: p for p in (LMProtocol(), RecallProtocol())}


def protocol(task: str, **changes) -> Protocol:
    """The default protocol of the paper's ``task`` ("lm" or "recall") with ``changes`` applied
    (None values are ignored); the research protocols: ``tl_research.protocols.protocol``."""
    return make(PAPER_PROTOCOLS, task, changes)


def make(table: dict, task: str, changes: dict) -> Protocol:
    """``table[task]`` with ``changes``; ValueError naming the tasks or fields that exist."""
    if task not in table:
        raise ValueError(f"unknown task {task!r}: expected one of {', '.join(table)}")
    fields = type(table[task]).field_names()
    for key in changes:
        if key not in fields:
            raise ValueError(f"--protocol {key}: the {task} protocol has no such field; "
                             f"it has: {', '.join(fields)}")
    return table[task].replace(**changes)


def chunk_eval_set(tokens: torch.Tensor, p) -> tuple[torch.Tensor, torch.Tensor]:
    """x, y [C, T]: the first ``eval_batches`` batches of non-overlapping chunks (all when None)."""
    x, y = data_text.eval_chunks(tokens, p.seq_len)
    if p.eval_batches is not None:
        x, y = x[: p.eval_batches * p.eval_batch_size], y[: p.eval_batches * p.eval_batch_size]
    return x, y
