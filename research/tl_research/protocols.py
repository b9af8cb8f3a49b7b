"""The research protocols: the paper's two (``tl_minimal.training.protocols``: lm, recall) and the studies'.

Every hyperparameter of a run, in one place, recorded in results; where the paper is silent the
value chosen is listed in the protocol's ``assumed`` field.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tl_minimal.data.recall import RecallLayout, layout_for
from tl_minimal.training.protocols import LMProtocol as PaperLMProtocol
from tl_minimal.training.protocols import Protocol, make
from tl_minimal.training.protocols import RecallProtocol as PaperRecallProtocol
from tl_minimal.training.train import TrainConfig

from .recall_schedule import LengthCurriculum, StudySampler, min_seq_len, scaled_length
from .run_config import RunConfig

# the six variants of the paper (the registry may hold more, e.g. frozen paper configurations)
PAPER_VARIANTS = (
    "transformer",
    "triple_latent",
    "triple_slot",
    "triple_hybrid",
    "transformer_plus_triple",
    "gated_hybrid_repaired",
)


CURRICULUM_TASKS = ("recall", "mqar")  # the tasks whose sequences may follow a length curriculum or hide answers


class Scheduled:
    """Mixed into every research protocol: its ``train`` is a :class:`~.run_config.RunConfig`, whose lr warmup
    and schedule the protocol fixes and records (``lr_schedule`` left out of :meth:`to_dict` while
    "constant", the paper's, so results files written before the field still match)."""

    TRAIN_KEYS = (*Protocol.TRAIN_KEYS, "warmup_steps", "lr_schedule")
    OPTIONAL = ("lr_schedule",)  # (not a field) fields left out of to_dict() while None

    def to_dict(self) -> dict:
        out = super().to_dict()
        if out["lr_schedule"] == "constant":
            out["lr_schedule"] = None
        return {k: v for k, v in out.items() if not (k in self.OPTIONAL and v is None)}


@dataclass
class LMProtocol(Scheduled, PaperLMProtocol):
    """The paper's byte-level protocol, with the research runs' training config."""

    train: TrainConfig = field(default_factory=RunConfig)


@dataclass
class RecallProtocol(Scheduled, PaperRecallProtocol):
    """The paper's recall protocol with the studies' switches; all off (None), it is the paper's."""

    train: TrainConfig = field(default_factory=lambda: RunConfig(weight_decay=0.01))

    # (start, end, steps): training sequences grow from start to end tokens over the first steps
    # steps (recall_schedule.py LengthCurriculum); None: every batch seq_len long. The paper's retrain
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
    OPTIONAL = ("lr_schedule", "length_curriculum", "hide_answers", "answer_at_key", "key_ids", "pairs_mix",
                "mix_lengths")  # (not a field) left out of to_dict() while None

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

    def layout(self) -> RecallLayout:
        # key_ids keys and as many values (Zoology draws a few pairs from a large vocabulary), e.g. 8 pairs
        # among 16 keys and 16 values: the values in context are a subset, as the paper's 4 pairs among 8
        return layout_for(max(self.n_pairs, self.key_ids or 0))

    def batch_options(self) -> dict:
        """The paper's sizes and layout, then hide_answers and answer_at_key (data/recall.py mqar_batch)."""
        return {**super().batch_options(), "hide_answers": bool(self.hide_answers),
                "answer_at_key": bool(self.answer_at_key)}

    def sampler(self, seed: int) -> StudySampler:
        """The training batches, shorter at first (``length_curriculum``) or from a pool (``pairs_mix``)."""
        return StudySampler(self.batch_size, seed, curriculum=self.curriculum(), pairs_mix=self.pairs_mix,
                            mix_lengths=self.mix_lengths or "full", **self.batch_options())

    def curriculum(self) -> LengthCurriculum | None:
        """The training batches' :class:`~tl_research.recall_schedule.LengthCurriculum`, or None."""
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
    steps: int = 200  # the learnable rows (gated_hybrid_repaired, with and without supersede) are flat by then
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
    assumed: tuple = (
        *LMProtocol.assumed,
        ("extension: trained exactly as lm; evaluated on eval_examples random spans of the validation split, "
         "each preceded by the byte before it and read twice, and on as many spans of uniform random bytes"),
    )


@dataclass
class TokenizedProtocol(Scheduled, Protocol):
    """MiniMind tokenized LM: hidden 96, 2 layers, 4 heads, seq 96, batch 4, 120 steps, 32 eval batches."""

    train: TrainConfig = field(default_factory=RunConfig)

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


PROTOCOLS = {p.task: p for p in (LMProtocol(), RecallProtocol(), MQARProtocol(), TokenizedProtocol(),
                                  OverwriteProtocol(), AliasProtocol(), DistanceProtocol(), InductionProtocol())}


def protocol(task: str, **changes) -> Protocol:
    """The default protocol of ``task`` with ``changes`` applied (None values are ignored)."""
    return make(PROTOCOLS, task, changes)


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
