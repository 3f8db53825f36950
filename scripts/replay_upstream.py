"""Serve the tests' replay of arXiv, ar5iv, the arXiv API and Semantic Scholar on loopback.

    .venv/bin/python scripts/replay_upstream.py [ENV_FILE]   (/tmp/replay.env)

For trying the network path and the discovery routes without the internet: the replay
(tests/replay.py) answers the pages, PDFs and API answers recorded in the corpus, and any
recorded id's metadata. The corpus is the directory PAPERANCHOR_CORPUS names (its html/, atom/
and s2/ folders), by default `shared/corpus` beside the checkout; it is not part of the
repository, and without it the script says so and stops. ENV_FILE gets the
`export PAPERANCHOR_…=…` lines that point a server at the replay; `. ENV_FILE` in the shell
that starts `paperanchor serve`. Runs until interrupted. Needs only what `make run` installs.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # tests/ is not installed: it is read from the checkout

from tests.replay import CORPUS_PARTS, Replay, default_corpus  # noqa: E402


def main() -> int:
    """Start the replay, write its environment, and wait."""
    env_file = Path(sys.argv[1] if len(sys.argv) > 1 else "/tmp/replay.env")
    corpus = default_corpus()
    missing = [part for part in CORPUS_PARTS if not (corpus / part).is_dir()]
    if missing:
        print(
            f"replay_upstream: no recordings at {corpus} (missing {', '.join(missing)}/): "
            "set PAPERANCHOR_CORPUS to the corpus directory, the one holding html/, atom/ "
            "and s2/; without it every route of the replay would answer 404",
            file=sys.stderr,
        )
        return 2
    replay = Replay(corpus / "html")
    replay.start()
    replay.answer_ids_from_recordings()
    lines = [f"export {key}={value}\n" for key, value in replay.environ(discovery=True).items()]
    env_file.write_text("".join(lines))
    print(f"replay of {corpus} at {replay.base_url}; . {env_file} to use it", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        replay.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
