"""What a tokenizer makes of one sentence, printed (notebook 00, section 7.2). Views print what the
tokenizer computed; the tokenizer itself is ``tl_minimal.data.tokenized``.

    print_encoding   vocabulary size, bytes against tokens, the ids and the pieces
"""

from __future__ import annotations


def print_encoding(tokenizer, sentence: str, encoding) -> None:
    """tokenizer: a ``tokenizers.Tokenizer``; encoding: ``tokenizer.encode(sentence)``."""
    if len(encoding.ids) != len(encoding.tokens):
        raise ValueError(f"an encoding has one piece per id: {len(encoding.ids)} ids, {len(encoding.tokens)} pieces")
    print(f"vocabulary size: {tokenizer.get_vocab_size():,}")
    print(f"{len(sentence.encode('utf-8'))} bytes -> {len(encoding.ids)} MiniMind tokens")
    print("ids:   ", encoding.ids)
    print("pieces:", encoding.tokens)
