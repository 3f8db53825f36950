"""Serve the tests' replay of arXiv, ar5iv, the arXiv API and Semantic Scholar on loopback.

    .venv/bin/python scripts/replay_upstream.py [ENV_FILE]   (/tmp/replay.env)

For trying the network path and the discovery routes without the internet: the replay
(tests/replay.py) answers the corpus pages, PDFs and recorded API answers, and any recorded
id's metadata. ENV_FILE gets the `export PAPERANCHOR_…=…` lines that point a server at it;
`. ENV_FILE` in the shell that starts `paperanchor serve`. Runs until interrupted.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # tests/ is not installed: it is read from the checkout

from tests.conftest import CORPUS  # noqa: E402
from tests.replay import Replay  # noqa: E402


def main() -> None:
    """Start the replay, write its environment, and wait."""
    env_file = Path(sys.argv[1] if len(sys.argv) > 1 else "/tmp/replay.env")
    replay = Replay(CORPUS / "html")
    replay.start()
    replay.answer_ids_from_recordings()
    lines = [f"export {key}={value}\n" for key, value in replay.environ(discovery=True).items()]
    env_file.write_text("".join(lines))
    print(f"replay at {replay.base_url}; . {env_file} to use it", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        replay.stop()


if __name__ == "__main__":
    main()
