"""The agent benchmark's questions (benchmarks/agent_questions.json) are what they claim: each
answer anchor names a paragraph of its corpus page holding the evidence, and is citable from
the read of the section an agent would pick for it."""

from __future__ import annotations

import pytest
from bench import agent_bench

from paperanchor.render.text import plain_text
from paperanchor.tree import Paragraph

QUESTIONS = agent_bench.questions()


def test_there_are_thirty_questions_or_more_over_several_papers() -> None:
    assert len(QUESTIONS) >= 30
    assert len({question["paper"] for question in QUESTIONS}) >= 6
    assert len({(q["paper"], q["answer"]) for q in QUESTIONS}) == len(QUESTIONS)


@pytest.mark.parametrize("question", QUESTIONS, ids=lambda q: f"{q['paper']}#{q['answer']}")
def test_each_answer_is_a_paragraph_holding_its_evidence_and_citable_from_its_read(
    question: dict[str, str],
) -> None:
    paper = agent_bench._paper(question["paper"])
    node = paper.index.resolve(question["answer"]).node
    assert isinstance(node, Paragraph) and node.id == question["answer"]
    assert question["evidence"] in plain_text(node)
    run = agent_bench.run_one(question)
    assert run.citable and run.spent < run.whole
