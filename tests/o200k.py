"""o200k_base token counts for the tests and the agent benchmark (SPEC §11)."""

from __future__ import annotations

import functools
import warnings
from typing import Any


@functools.cache
def _encoding() -> Any:
    with warnings.catch_warnings():
        # bpe-openai 0.1.4 opens its vocabularies with importlib.resources.open_binary
        warnings.simplefilter("ignore", DeprecationWarning)
        import bpe_openai

        encoding = bpe_openai.get_encoding("o200k_base")
        encoding.encode("x")  # the vocabulary is read on the first use
        return encoding


def count(text: str) -> int:
    """The o200k_base tokens of `text`."""
    return len(_encoding().encode(text))
