"""The bytes of a local document's image (`/files/{path}`), read within bounds.

Only a regular file is read, only inside the local directory once links are resolved, opened
without following a link and without blocking, and never past `MAX_IMAGE_BYTES`: a FIFO named
`fifo.png` held a worker thread for good (eight of them every paper route), `/dev/zero` linked
as `zero.png` grew the server by 2.6 GB in 4.3 s, and a link to any `*.png` of the machine was
served.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from paperanchor.errors import NotFound, TooLarge

MAX_IMAGE_BYTES = 20 * 1024 * 1024  # above any figure of the corpus (the largest is 4 MB)
_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)


def read_image(folder: Path, parts: list[str], shown: str, limit: int = MAX_IMAGE_BYTES) -> bytes:
    """The file `parts` names under `folder`, or NotFound / TooLarge; `shown` is its name as
    an error detail may repeat it. Links inside the folder are followed to their target only
    when that target is inside the folder too."""
    missing = NotFound(f"No image {shown} in the local directory")
    try:
        root = folder.resolve(strict=True)
        target = Path(root, *parts).resolve(strict=True)
    except (OSError, RuntimeError):  # RuntimeError: a loop of links
        raise missing from None
    if not target.is_relative_to(root) or target == root:
        raise missing
    try:
        descriptor = os.open(target, _FLAGS)
    except OSError:  # a link swapped in after the resolve (O_NOFOLLOW), or gone
        raise missing from None
    with os.fdopen(descriptor, "rb") as handle:
        status = os.fstat(handle.fileno())
        if not stat.S_ISREG(status.st_mode):
            raise missing  # a FIFO, a device, a socket, a folder
        if status.st_size > limit:
            raise TooLarge(f"The image {shown} is over {limit // (1024 * 1024)} MB")
        body = handle.read(limit + 1)
    if len(body) > limit:  # grew since the fstat
        raise TooLarge(f"The image {shown} is over {limit // (1024 * 1024)} MB")
    return body
