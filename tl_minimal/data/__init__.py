"""The data sets: byte-level WikiText-2 (``text``), MiniMind-tokenized text (``tokenized``) and the
synthetic associative-recall tasks (``recall``, ``recall_breaks``), and held-out text read twice
(``induction``). Each module's docstring says where its data come
from and shows a worked example."""
