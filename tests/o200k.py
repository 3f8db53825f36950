"""o200k_base token counts for the tests and the agent benchmark (SPEC §11): the service's own
counter (paperanchor.tokens) where it has one, else bpe-openai's, which counts the same."""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable


@functools.cache
def _counter() -> Callable[[str], int]:
    try:
        from paperanchor import tokens  # type: ignore[attr-defined, unused-ignore]

        counted: Callable[[str], int] = tokens.count
        return counted
    except ImportError:
        pass
    with warnings.catch_warnings():
        # bpe-openai 0.1.4 opens its vocabularies with importlib.resources.open_binary
        warnings.simplefilter("ignore", DeprecationWarning)
        import bpe_openai

        encoding = bpe_openai.get_encoding("o200k_base")
        encoding.encode("x")  # the vocabulary is read on the first use
    return lambda text: len(encoding.encode(text))


def count(text: str) -> int:
    """The o200k_base tokens of `text`."""
    return _counter()(text)
