"""The agent workflow benchmark (issue 22, SPEC §11): for each question of
benchmarks/agent_questions.json, whose answer sits in one known paragraph of a corpus paper,
the o200k tokens an agent spends following outline -> read (the section holding the answer,
with its anchor markers, as MCP answers) -> cite (the marker it read), against reading the
whole paper; and whether the answer's anchor is citable from what it read (its marker is in
the read). Medians over the questions; targets: at most 20% of the whole paper, 100% citable.

Runnable alone: `python -m bench.agent_bench` rewrites its section of BENCHMARKS.md (and
`--print` only prints it); `make bench` runs it with the others.
"""

from __future__ import annotations

import argparse
import functools
import json
import statistics
from dataclasses import dataclass
from pathlib import Path

from bench.common import CORPUS, ROOT
from paperanchor import service
from paperanchor.compact import compact
from paperanchor.operations import dumps
from paperanchor.paper import LoadedPaper, Paper
from paperanchor.parse import parse_document
from paperanchor.render.markdown import marker
from paperanchor.tokens import count

QUESTIONS = ROOT / "benchmarks" / "agent_questions.json"
OUT = ROOT / "BENCHMARKS.md"
TARGET_SHARE = 0.20
BEGIN, END = "<!-- agent-bench -->", "<!-- /agent-bench -->"
PUBLIC_URL = "http://127.0.0.1:8000"  # what `cite` answers over HTTP carry


@dataclass(frozen=True, slots=True)
class Run:
    paper: str
    question: str
    answer: str
    section: str
    outline: int
    read: int
    cite: int
    whole: int
    citable: bool

    @property
    def spent(self) -> int:
        return self.outline + self.read + self.cite

    @property
    def share(self) -> float:
        return self.spent / self.whole


@functools.cache
def _paper(page: str) -> Paper:
    path = CORPUS / page
    name = Path(page).name.split(".")[0]
    document = parse_document(path.read_bytes(), f"https://arxiv.org/html/{name}")
    return Paper.open(LoadedPaper(document, name, name, None, False, "arxiv", path.name))


def questions() -> list[dict[str, str]]:
    """The questions, as the data file holds them."""
    loaded: list[dict[str, str]] = json.loads(QUESTIONS.read_text(encoding="utf-8"))["questions"]
    return loaded


def run_one(question: dict[str, str]) -> Run:
    """One question followed outline -> read -> cite, counted in o200k tokens."""
    paper = _paper(question["paper"])
    answer = paper.index.resolve(question["answer"])
    # the agent reads the innermost section the outline lists for the answer
    section = answer.section_id or answer.top_id
    outline_text = dumps(compact(service.outline(paper)))
    read = service.read(paper, section, None, "mcp", anchors=True).markdown
    label = paper.index.marks[answer.node.id]
    citable = marker(label) in read
    cited = service.cite(paper, label if citable else answer.node.id, PUBLIC_URL)
    assert cited["anchor"] == answer.node.id
    return Run(
        question["paper"],
        question["question"],
        answer.node.id,
        section,
        count(outline_text),
        count(read),
        count(dumps(cited)),
        count(paper.markdown()),
        citable,
    )


def run() -> list[Run]:
    """Every question of the data file."""
    return [run_one(question) for question in questions()]


def section_text(runs: list[Run]) -> str:
    """The BENCHMARKS.md section: the table, the medians, the share citable."""
    lines = [
        BEGIN,
        "## 10. Agent workflow: outline → read → cite ÷ the whole paper (o200k tokens)",
        "",
        f"{len(runs)} questions over {len({r.paper for r in runs})} corpus papers "
        "(benchmarks/agent_questions.json), each answered by one known paragraph: the compact "
        "outline, the read of the section holding the answer with its anchor markers (as MCP "
        "answers, default maxTokens 8000), the cite of the marker shown for the answer, against "
        "the whole paper's Markdown (bench/agent_bench.py; `python -m bench.agent_bench`). "
        f"Targets: median share ≤ {TARGET_SHARE:.0%}, 100% citable.",
        "",
        "| paper | answer | section read | outline | read | cite | whole | share | citable |",
        "|---|---|---|---:|---:|---:|---:|---:|---|",
    ]
    for r in runs:
        page = Path(r.paper).name.removesuffix(".html")
        lines.append(
            f"| {page} | {r.answer} | {r.section} | {r.outline:,} | {r.read:,} | {r.cite:,} | "
            f"{r.whole:,} | {r.share:.1%} | {'yes' if r.citable else '**no**'} |"
        )
    share = statistics.median(r.share for r in runs)
    citable = sum(r.citable for r in runs) / len(runs)
    spent = statistics.median(r.spent for r in runs)
    whole = statistics.median(r.whole for r in runs)
    meets = "meets" if share <= TARGET_SHARE and citable == 1 else "**misses**"
    lines += [
        "",
        f"Median spent {spent:,.0f} tokens against a median whole paper of {whole:,.0f}; "
        f"median share **{share:.1%}** (target ≤ {TARGET_SHARE:.0%}); citable from what was "
        f"read: **{citable:.0%}** ({sum(r.citable for r in runs)} of {len(runs)}): {meets}.",
        END,
    ]
    return "\n".join(lines) + "\n"


def update(path: Path = OUT, runs: list[Run] | None = None) -> str:
    """Rewrite this benchmark's section of BENCHMARKS.md (appended when it has none)."""
    text = section_text(runs if runs is not None else run())
    current = path.read_text(encoding="utf-8") if path.exists() else ""
    if BEGIN in current and END in current:
        head, rest = current.split(BEGIN, 1)
        tail = rest.split(END, 1)[1].lstrip("\n")
        current = head + text + ("\n" + tail if tail else "")
    else:
        current = current.rstrip("\n") + "\n\n" + text
    path.write_text(current, encoding="utf-8")
    return text


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--print", action="store_true", help="print the section, write nothing")
    args = parser.parse_args()
    if args.print:
        print(section_text(run()))
    else:
        print(update())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
