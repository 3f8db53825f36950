"""A CriticMarkup reader (tests only): applies the marks of a text and gives back both sides.

It reads marks as CriticMarkup's spec does (`{++…++}`, `{--…--}`, `{~~…~>…~~}`, no nesting, the
first closer ends a mark) and honours backslash escapes as CommonMark does: a backslash and
the character after it are text, kept as they are. A mark left open, or a comment or highlight
(which we never write), fails the read: it is paper text that became markup.
"""

from __future__ import annotations

OPENERS = ("{++", "{--", "{~~", "{==", "{>>")
CLOSERS = ("++}", "--}", "~~}", "==}", "<<}")


class Unreadable(AssertionError):
    """The text is not CriticMarkup as we write it."""


def _find(text: str, mark: str, start: int) -> int:
    """The first `mark` at or after `start` that no backslash escapes."""
    at = start
    while at < len(text):
        if text[at] == "\\":
            at += 2
            continue
        if text.startswith(mark, at):
            return at
        at += 1
    raise Unreadable(f"{mark!r} never closes the mark opened before {start}: {text[:200]!r}")


def sides(text: str) -> tuple[str, str]:
    """The old and the new text that `text`'s marks describe."""
    old: list[str] = []
    new: list[str] = []
    at = 0
    plain_from = 0
    while at < len(text):
        if text[at] == "\\":
            at += 2
            continue
        opener = text[at : at + 3]
        if opener not in OPENERS:
            at += 1
            continue
        plain = text[plain_from:at]
        old.append(plain)
        new.append(plain)
        start = at + 3
        if opener == "{++":
            end = _find(text, "++}", start)
            new.append(text[start:end])
        elif opener == "{--":
            end = _find(text, "--}", start)
            old.append(text[start:end])
        elif opener == "{~~":
            middle = _find(text, "~>", start)
            end = _find(text, "~~}", middle + 2)
            old.append(text[start:middle])
            new.append(text[middle + 2 : end])
        elif opener == "{>>":
            end = _find(text, "<<}", start)  # a comment of ours (a moved block): neither side
        else:
            raise Unreadable(f"a {opener!r} mark we never write at {at}: {text[:200]!r}")
        at = end + 3
        plain_from = at
    old.append(text[plain_from:])
    new.append(text[plain_from:])
    return "".join(old), "".join(new)


def marks(text: str) -> int:
    """How many marks, closers and `~>` `text` holds (0: CriticMarkup reads it as text)."""
    count = 0
    at = 0
    while at < len(text):
        if text[at] == "\\":
            at += 2
            continue
        if text[at : at + 3] in OPENERS + CLOSERS or text.startswith("~>", at):
            count += 1
        at += 1
    return count
