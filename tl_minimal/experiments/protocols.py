"""The paper's protocols as dataclasses: every hyperparameter of a run, in one place, recorded in results.

docs/paper.md section 4 gives most numbers; where the paper is silent the value chosen here is
listed in the protocol's ``assumed`` field, so a reader of the results sees which is which.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from ..data.recall import LengthCurriculum, min_seq_len
from ..training.train import LR_SCHEDULES

MODEL_KEYS = ("d_model", "n_layers", "n_heads", "dropout")  # + max_seq_len = seq_len
# the six variants of the paper (the registry may hold more, e.g. frozen paper configurations)
PAPER_VARIANTS = (
    "transformer",
    "triple_latent",
    "triple_slot",
    "triple_hybrid",
    "transformer_plus_triple",
    "gated_hybrid",
)


@dataclass
class Protocol:
    """Fields shared by every task. ``model_config()`` is what goes to ``build_model``."""

    task: str = ""
    metric: str = ""
    vocab_size: int = 259
    # model
    d_model: int = 64
    n_layers: int = 3
    n_heads: int = 4
    dropout: float = 0.1
    # training (AdamW, constant lr with optional linear warmup, gradient clipping; optional cosine decay)
    seq_len: int = 128
    batch_size: int = 16
    steps: int = 80
    lr: float = 3e-4
    weight_decay: float = 0.05
    betas: tuple = (0.9, 0.999)
    grad_clip: float = 1.0
    warmup_steps: int = 0
    # None (= "constant", the paper's) or "cosine": lr decays from lr after the warmup towards 0 at ``steps``
    lr_schedule: str | None = None
    seeds: tuple = (0,)
    assumed: tuple = ()

    def __post_init__(self):
        w = self.warmup_steps
        if isinstance(w, bool) or not isinstance(w, int) or w < 0:
            raise ValueError(f"warmup_steps must be a whole number >= 0 (0: constant lr), got {w!r}")
        if self.lr_schedule not in (None, *LR_SCHEDULES):
            raise ValueError(f"lr_schedule must be one of {', '.join(LR_SCHEDULES)}, "
                             f"got {self.lr_schedule!r}")
        if self.lr_schedule == "constant":
            self.lr_schedule = None  # the default, omitted from to_dict: files written before the field match

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

    def replace(self, **changes) -> Protocol:
        return dataclasses.replace(self, **{k: v for k, v in changes.items() if v is not None})

    def to_dict(self) -> dict:
        """Every field, except the optional ones (:data:`UNSET_OMITTED`) that are off: a results file
        written before such a field existed has the same settings as one written now without it."""
        return {k: v for k, v in dataclasses.asdict(self).items() if not (k in UNSET_OMITTED and v is None)}

    @classmethod
    def field_names(cls) -> tuple:
        """The fields ``--protocol KEY=VALUE`` may change (all but task, metric and assumed)."""
        return tuple(f.name for f in dataclasses.fields(cls) if f.name not in ("task", "metric", "assumed"))


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
    weight_decay: float = 0.01
    n_pairs: int = 4
    n_queries: int = 1
    eval_examples: int = 2048
    # (start, end, steps): training sequences grow from start to end tokens over the first steps
    # steps (data/recall.py LengthCurriculum); None: every batch seq_len long. The paper's retrain
    # recipe: --protocol length_curriculum=32:128:150 (with warmup_steps=50, --set read_gate_bias=-2)
    length_curriculum: tuple | None = None
    assumed: tuple = (
        "grad clip 1.0 and dropout 0.1 as in the byte-level protocol",
        "model d=64, 3 layers, 4 heads, registry defaults otherwise (the byte-level model)",
        "keys distinct and values distinct within a sequence",
    )

    def __post_init__(self):
        super().__post_init__()
        if self.length_curriculum is None:
            return
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

    def curriculum(self) -> LengthCurriculum | None:
        """The training batches' :class:`~tl_minimal.data.recall.LengthCurriculum`, or None."""
        return None if self.length_curriculum is None else LengthCurriculum.parse(self.length_curriculum)


@dataclass
class MQARProtocol(RecallProtocol):
    """Multi-query recall (an extension, not in the paper): 8 pairs, 4 questions per sequence."""

    task: str = "mqar"
    n_pairs: int = 8
    n_queries: int = 4
    assumed: tuple = ("extension: 8 pairs and 4 distinct questions per sequence, same vocabulary as recall",)


@dataclass
class OverwriteProtocol(RecallProtocol):
    """Where recall breaks (1): each key written 1-3 times (the asked one 2-3), answer = the latest value."""

    task: str = "overwrite"
    steps: int = 200  # the learnable rows (gated_hybrid, with and without supersede) are flat by then
    n_pairs: int = 4  # distinct keys per sequence
    max_writes: int = 3
    assumed: tuple = (
        ("extension: 4 keys, 1-3 writes each (the asked key 2-3), 16 value ids, all values "
         "distinct within a sequence, writes shuffled; otherwise the recall protocol"),
    )


@dataclass
class AliasProtocol(RecallProtocol):
    """Where recall breaks (2): 8 keys with 2-4 alias tokens each; written with one alias, asked with another."""

    task: str = "alias"
    steps: int = 1_000  # the plateau at ln 8 ends at a seed-dependent step (70 to past 1,000); 200 was too short
    n_pairs: int = 4
    n_classes: int = 8
    min_aliases: int = 2
    max_aliases: int = 4
    same_alias: bool = False  # True: asked with the written token (the identical-token control)
    same_alias_share: float = 0.0  # training only: this share of questions asked with the written token
    assumed: tuple = (
        ("extension: the alias table (which ids mean the same key) is fixed by the run's seed; "
         "otherwise the recall protocol"),
    )


@dataclass
class DistanceProtocol(RecallProtocol):
    """Where recall breaks (3): the paper's 4 pairs at the start, the question at the end of 1k-4k tokens.

    One run trains on every length in ``lengths`` (batch k has length lengths[k mod 3]) and is
    evaluated on ``eval_examples`` fresh sequences PER length. ``seq_len`` is not set by hand: it
    is the longest length, and the models' ``max_seq_len`` (learned positions) follows it.
    ``--protocol lengths=1024,2048`` changes the lengths (smoke tests use short ones).
    """

    task: str = "distance"
    lengths: tuple = (1024, 2048, 4096)
    seq_len: int = 4096  # = max(lengths), set in __post_init__
    batch_size: int = 4  # a 4,096-token Transformer step costs about 0.5 s of CPU per sequence
    steps: int = 200
    eval_examples: int = 256  # per length
    n_pairs: int = 4
    assumed: tuple = (
        ("extension: the paper's layout and 4 pairs; every run trains on all lengths in turn "
         "(batch 4, cycling 1024, 2048, 4096) and is evaluated per length; otherwise the recall protocol"),
    )

    def __post_init__(self):
        super().__post_init__()
        lengths = self.lengths
        if isinstance(lengths, str):  # --protocol lengths=1024,2048
            try:
                lengths = [int(w) for w in lengths.replace(" ", "").split(",") if w]
            except ValueError:
                raise ValueError(f"lengths: expected whole numbers separated by commas, got {self.lengths!r}") from None
        elif isinstance(lengths, int):
            lengths = [lengths]
        lengths = tuple(int(t) for t in lengths)
        if not lengths or any(t < 1 for t in lengths) or len(set(lengths)) != len(lengths):
            raise ValueError(f"lengths: expected distinct positive whole numbers, got {self.lengths!r}")
        self.lengths, self.seq_len = lengths, max(lengths)

    def replace(self, **changes) -> Protocol:
        if changes.get("seq_len") is not None and changes["seq_len"] != self.seq_len:
            raise ValueError("distance: seq_len is the longest of the lengths; change the lengths instead "
                             "(e.g. --protocol lengths=1024,2048)")
        return super().replace(**changes)


@dataclass
class InductionProtocol(LMProtocol):
    """Where recall breaks (4): the byte-level LM protocol, then held-out text read twice (data/induction.py)."""

    task: str = "induction"
    metric: str = "copy_ratio"  # loss on the second copy / loss on the first, held-out text (lower: more copying)
    steps: int = 80  # the paper's; the 2,000-step table is the same command with --steps 2000
    span_len: int = 64  # bytes per copy: two copies fill the context of 128
    eval_examples: int = 512  # spans of text, and as many of random bytes, per run
    assumed: tuple = LMProtocol.assumed + (
        ("extension: trained exactly as lm; evaluated on eval_examples random spans of the validation split, "
         "each preceded by the byte before it and read twice, and on as many spans of uniform random bytes"),
    )


@dataclass
class TokenizedProtocol(Protocol):
    """MiniMind tokenized LM: hidden 96, 2 layers, 4 heads, seq 96, batch 4, 120 steps, 32 eval batches."""

    task: str = "tokenized"
    metric: str = "loss"
    vocab_size: int = 6400
    d_model: int = 96
    n_layers: int = 2
    seq_len: int = 96
    batch_size: int = 4
    steps: int = 120
    seeds: tuple = (1, 2, 3)
    eval_batches: int | None = 32
    eval_batch_size: int = 4
    max_docs: int | None = 200_000  # documents read from a MiniMind jsonl (it is 1.6 GB)
    assumed: tuple = (
        "weight decay 0.05, grad clip 1.0, dropout 0.1, registry defaults (S=16), as in the byte-level LM",
        "documents wrapped as <|im_start|> text <|im_end|>",
        "eval chunks in holdout order",
    )


CURRICULUM_TASKS = ("recall", "mqar")  # the tasks whose training sequences may follow a length curriculum
UNSET_OMITTED = ("length_curriculum", "lr_schedule")  # optional fields left out of to_dict() while None

PROTOCOLS = {p.task: p for p in (LMProtocol(), RecallProtocol(), MQARProtocol(), TokenizedProtocol(),
                                  OverwriteProtocol(), AliasProtocol(), DistanceProtocol(), InductionProtocol())}


def protocol(task: str, **changes) -> Protocol:
    """The default protocol of ``task`` with ``changes`` applied (None values are ignored)."""
    if task not in PROTOCOLS:
        raise ValueError(f"unknown task {task!r}: expected one of {', '.join(PROTOCOLS)}")
    check_fields(task, changes)
    return PROTOCOLS[task].replace(**changes)


def check_fields(task: str, changes) -> None:
    """ValueError naming the fields ``task``'s protocol has when ``changes`` names another one."""
    fields = type(PROTOCOLS[task]).field_names()
    for key in changes:
        if key not in fields:
            raise ValueError(f"--protocol {key}: the {task} protocol has no such field; it has: {', '.join(fields)}")


__all__ = [
    "PROTOCOLS",
    "AliasProtocol",
    "DistanceProtocol",
    "InductionProtocol",
    "LMProtocol",
    "MQARProtocol",
    "OverwriteProtocol",
    "Protocol",
    "RecallProtocol",
    "TokenizedProtocol",
    "protocol",
]
