"""The paper's two protocols, ``protocol("lm")`` and ``protocol("recall", steps=500)``: every hyperparameter of
a run in one dataclass, recorded in results (docs/library.md, "One configuration story"; docs/paper.md
section 4; ``assumed`` says what the paper leaves open). The studies' protocols: ``tl_research.protocols``.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import torch

from ..data import text as data_text
from ..data.recall import RecallLayout, RecallSampler, eval_set, layout_for
from ..registry import COMMON
from .train import TrainConfig

MODEL_KEYS = ("d_model", "n_layers", "n_heads", "dropout")  # + max_seq_len = seq_len


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
    # AdamW, constant lr, gradient clipping
    train: TrainConfig = field(default_factory=TrainConfig)  # its defaults: the paper's
    seeds: tuple = (0,)
    assumed: tuple = ()
    # (not a field) the TrainConfig fields a protocol fixes and records (device, ... belong to a run)
    TRAIN_KEYS = ("lr", "weight_decay", "betas", "grad_clip")

    def __post_init__(self):
        self.train.check()  # ValueError saying what is expected

    def __getattr__(self, name):
        """``p.lr`` and the other :attr:`TRAIN_KEYS`: read from ``p.train``."""
        if name in self.TRAIN_KEYS:
            return getattr(self.train, name)
        raise AttributeError(f"{type(self).__name__} has no attribute {name!r}")

    def __setattr__(self, name, value):
        if name in self.TRAIN_KEYS:  # an attribute beside p.train would be ignored by training and by to_dict
            raise AttributeError(f"{name} is a field of the protocol's train config: "
                                 f"p.replace({name}=...) or p.train.{name} = ...")
        super().__setattr__(name, value)

    def model_config(self, overrides: dict | None = None, allowed=None) -> dict:
        """Keyword arguments for ``build_model``: the protocol's model fields, then ``overrides`` (those in
        ``allowed``, the variant's setting names, when given); the rest stay at the registry's defaults."""
        config = {k: getattr(self, k) for k in MODEL_KEYS}
        config["max_seq_len"] = self.seq_len
        config.update({k: v for k, v in (overrides or {}).items() if allowed is None or k in allowed})
        return config

    def train_config(self, **changes) -> TrainConfig:
        """The training loop's TrainConfig: this protocol's optimizer settings, then ``changes`` (device, ...)."""
        return dataclasses.replace(self.train, **changes)

    def replace(self, **changes) -> Protocol:
        """A copy with ``changes`` (None values ignored); :attr:`TRAIN_KEYS` go to the ``train`` config."""
        changes = {k: v for k, v in changes.items() if v is not None}
        train = {k: changes.pop(k) for k in self.TRAIN_KEYS if k in changes}
        return dataclasses.replace(self, train=dataclasses.replace(self.train, **train), **changes)

    def to_dict(self) -> dict:
        """Every field, ``train`` as its :attr:`TRAIN_KEYS` in its place."""
        out = {}
        for k, v in dataclasses.asdict(self).items():
            out.update({t: v[t] for t in self.TRAIN_KEYS} if k == "train" else {k: v})
        return out

    @classmethod
    def field_names(cls) -> tuple:
        """The fields ``--protocol KEY=VALUE`` may change (all but task, metric and assumed; ``train``
        as its :attr:`TRAIN_KEYS`), in the order :meth:`to_dict` records them."""
        names = [cls.TRAIN_KEYS if f.name == "train" else (f.name,) for f in dataclasses.fields(cls)]
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
    """The paper's associative recall: 4 pairs, one question at the last position (the studies' switches:
    ``tl_research.protocols.RecallProtocol``)."""

    task: str = "recall"
    metric: str = "accuracy"
    vocab_size: int = 64
    batch_size: int = 32
    steps: int = 200  # main table; the seed study uses 500
    train: TrainConfig = field(default_factory=lambda: TrainConfig(weight_decay=0.01))
    n_pairs: int = 4
    n_queries: int = 1
    eval_examples: int = 2048
    assumed: tuple = (
        "grad clip 1.0 and dropout 0.1 as in the byte-level protocol",
        "model d=64, 3 layers, 4 heads, registry defaults otherwise (the byte-level model)",
        "keys distinct and values distinct within a sequence",
    )

    def layout(self) -> RecallLayout:
        """Where keys, values and filler live in the vocabulary for this many pairs (data/recall.py)."""
        return layout_for(self.n_pairs)

    def batch_options(self) -> dict:
        """This protocol's sequences as keywords of data/recall.py's ``mqar_batch``: sizes and layout."""
        return {"n_queries": self.n_queries, "n_pairs": self.n_pairs, "seq_len": self.seq_len, "layout": self.layout()}

    def sampler(self, seed: int) -> RecallSampler:
        """The training batches of seed ``seed``: ``sampler(step) -> (x, y)``."""
        return RecallSampler(self.batch_size, seed, **self.batch_options())

    def eval_set(self, seed: int):
        """The fresh examples that score training seed ``seed``: (x, y) [eval_examples, T]."""
        return eval_set(self.eval_examples, seed, **self.batch_options())


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
    return data_text.eval_chunks(tokens, p.seq_len, p.eval_batches and p.eval_batches * p.eval_batch_size)
