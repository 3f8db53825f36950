"""Text as the command line writes it to a terminal: a paper's control characters made visible.

A paper's text is untrusted, and a terminal obeys control sequences: ESC `[2J` clears the
screen, OSC 0 sets the window title, OSC 52 writes the clipboard, OSC 8 hides a link behind
words, `[8m` conceals what follows, and a right-to-left override (U+202E) reorders an error
detail. Every C0 control but tab and newline, DEL, every C1 control and the bidi controls are
written as `\\uXXXX`: visible in text, and inside a JSON string the very escape JSON uses, so
`--json` output stays the same JSON.
"""

from __future__ import annotations

from typing import Any, TextIO

_CONTROLS = [*(c for c in range(0x20) if c not in (0x09, 0x0A)), 0x7F, *range(0x80, 0xA0)]
_BIDI = [0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A)]
VISIBLE = {code: f"\\u{code:04x}" for code in (*_CONTROLS, *_BIDI)}


def visible(text: str) -> str:
    """`text` with every control and bidi character written as its `\\uXXXX` escape."""
    return text.translate(VISIBLE)


class TerminalText:
    """A text stream whose writes pass through `visible`; everything else is the stream's."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        """Write the visible form of `text`."""
        return self.stream.write(visible(text))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)
