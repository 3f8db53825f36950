"""Write the constructed edition pairs of `make bench-anchors` (fixtures/editions/).

One invented paper (its text drawn from a fixed vocabulary with a fixed seed, so that every run
writes the same files) and, for each kind of change a new version makes, the paper with that
change scripted: `src/<case>-old/main.tex` and `src/<case>-new/main.tex`. `cases.json` records,
for every block of the old edition (paragraph, equation, table, figure), the block of the new
edition it became (its key), or none when it was deleted: the truth, known by construction.
bench/anchors.py turns the keys into node ids by finding each block's known text in the
converted pages. Run `scripts/build-edition-fixtures.sh` after this one to convert them with
Debian's latexml. The text is original and released under CC0.

    python scripts/edition_fixtures.py
"""

from __future__ import annotations

import copy
import json
import random
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "fixtures" / "editions"

WORDS = [
    "adaptive",
    "alignment",
    "analysis",
    "anchor",
    "approach",
    "architecture",
    "assumption",
    "baseline",
    "batch",
    "benchmark",
    "boundary",
    "budget",
    "buffer",
    "candidate",
    "capacity",
    "channel",
    "cluster",
    "coefficient",
    "collection",
    "comparison",
    "component",
    "compression",
    "condition",
    "configuration",
    "constraint",
    "context",
    "corpus",
    "correction",
    "cost",
    "coverage",
    "criterion",
    "curve",
    "dataset",
    "decoder",
    "density",
    "dependency",
    "deployment",
    "depth",
    "design",
    "detector",
    "deviation",
    "dimension",
    "distance",
    "distribution",
    "document",
    "domain",
    "encoder",
    "energy",
    "ensemble",
    "entropy",
    "error",
    "estimate",
    "evaluation",
    "evidence",
    "experiment",
    "factor",
    "feature",
    "filter",
    "fragment",
    "framework",
    "frequency",
    "function",
    "gradient",
    "graph",
    "heuristic",
    "hierarchy",
    "hypothesis",
    "index",
    "inference",
    "input",
    "instance",
    "interval",
    "kernel",
    "label",
    "latency",
    "layer",
    "learner",
    "length",
    "likelihood",
    "limit",
    "margin",
    "matrix",
    "measure",
    "memory",
    "method",
    "metric",
    "model",
    "module",
    "network",
    "noise",
    "norm",
    "objective",
    "observation",
    "operator",
    "optimizer",
    "order",
    "output",
    "overhead",
    "parameter",
    "partition",
    "passage",
    "pattern",
    "penalty",
    "performance",
    "pipeline",
    "policy",
    "pool",
    "position",
    "precision",
    "prediction",
    "prior",
    "probability",
    "procedure",
    "profile",
    "projection",
    "property",
    "protocol",
    "quality",
    "query",
    "range",
    "rank",
    "rate",
    "ratio",
    "reader",
    "recall",
    "record",
    "reference",
    "region",
    "regularizer",
    "representation",
    "resolution",
    "resource",
    "response",
    "result",
    "revision",
    "routine",
    "sample",
    "scale",
    "schedule",
    "score",
    "segment",
    "selection",
    "sequence",
    "setting",
    "signal",
    "similarity",
    "size",
    "solution",
    "source",
    "span",
    "specification",
    "stage",
    "state",
    "statistic",
    "step",
    "strategy",
    "structure",
    "subset",
    "summary",
    "support",
    "surface",
    "system",
    "table",
    "target",
    "task",
    "technique",
    "template",
    "tensor",
    "term",
    "threshold",
    "token",
    "trace",
    "trade-off",
    "training",
    "transform",
    "tree",
    "trial",
    "update",
    "validation",
    "value",
    "variance",
    "vector",
    "version",
    "view",
    "volume",
    "weight",
    "window",
    "workload",
]
VERBS = [
    "improves",
    "reduces",
    "controls",
    "predicts",
    "shapes",
    "limits",
    "balances",
    "explains",
    "follows",
    "exceeds",
    "matches",
    "supports",
    "weakens",
    "preserves",
    "separates",
    "combines",
    "measures",
    "tracks",
    "bounds",
    "estimates",
    "stabilises",
]
LINKS = [
    "\nin practice",
    " for this reason",
    " in contrast",
    " as expected",
    " on the other hand",
    " in every run",
    "\nat a fixed budget",
    " under mild assumptions",
    " for long inputs",
    " in the revised setting",
    "\n",
]
LINKS = [link.strip() for link in LINKS if link.strip()]


@dataclass
class Block:
    key: str
    kind: str  # p, eq, table, fig
    text: str = ""
    rows: list[list[str]] = field(default_factory=list)


@dataclass
class Section:
    key: str
    title: str
    blocks: list[Block]
    level: int = 1
    appendix: bool = False


class Writer:
    def __init__(self, seed: int) -> None:
        self.random = random.Random(seed)

    def sentence(self) -> str:
        r = self.random
        words = [r.choice(WORDS) for _ in range(r.randint(3, 5))]
        tail = [r.choice(WORDS) for _ in range(r.randint(3, 6))]
        link = r.choice(LINKS).strip()
        body = f"The {' '.join(words)} {r.choice(VERBS)} the {' '.join(tail)}"
        return (
            f"{link.capitalize()} {body[0].lower()}{body[1:]}." if r.random() < 0.4 else f"{body}."
        )

    def paragraph(self, sentences: int | None = None) -> str:
        count = sentences or self.random.randint(3, 5)
        return " ".join(self.sentence() for _ in range(count))

    def equation(self, n: int) -> str:
        r = self.random
        a, b, c = (r.choice("abcdfghkmnpqrsuvwxyz") for _ in range(3))
        return rf"{a}_{{{n}}} = \frac{{{b}^{{{r.randint(2, 9)}}}}}{{{c} + {r.randint(2, 99)}}}"

    def table(self) -> list[list[str]]:
        r = self.random
        head = ["method", r.choice(WORDS), r.choice(WORDS)]
        rows = [
            [
                r.choice(WORDS),
                f"{r.randint(10, 99)}.{r.randint(0, 9)}",
                f"{r.randint(10, 99)}.{r.randint(0, 9)}",
            ]
            for _ in range(3)
        ]
        return [head, *rows]


def base_paper(w: Writer) -> list[Section]:
    """The old edition: six sections, two appendices, paragraphs, equations, tables, a figure."""
    counter = {"p": 0, "eq": 0, "table": 0, "fig": 0}

    def p(text: str | None = None) -> Block:
        counter["p"] += 1
        return Block(f"p{counter['p']}", "p", text or w.paragraph())

    def eq() -> Block:
        counter["eq"] += 1
        return Block(f"eq{counter['eq']}", "eq", w.equation(counter["eq"]))

    def table(caption: str) -> Block:
        counter["table"] += 1
        return Block(f"table{counter['table']}", "table", caption, w.table())

    def fig(caption: str) -> Block:
        counter["fig"] += 1
        return Block(f"fig{counter['fig']}", "fig", caption)

    twin = w.paragraph(4)
    twin_words = twin.split()
    other = list(twin_words)
    for at in (5, 17, 29):  # a few words differ between the twins
        other[at] = w.random.choice(WORDS)
    twin_b = " ".join(other)
    twin2 = w.paragraph(3)
    words2 = twin2.split()
    words2[8] = w.random.choice(WORDS)
    words2[-3] = w.random.choice(WORDS)
    twin2_b = " ".join(words2)
    return [
        Section("intro", "Introduction", [p(), p(), p(), p()]),
        Section("related", "Related Work", [p(), p(), p()]),
        Section("method", "Method", [p(), eq(), p(), p()]),
        Section("model", "Model Details", [p(), eq(), p(), eq(), p()], level=2),
        Section("training", "Training", [p(), p(), p()], level=2),
        Section(
            "experiments",
            "Experiments",
            [
                p(),
                table("Results on the main benchmark"),
                p(),
                fig("Overview of the pipeline"),
                p(),
                table("Ablation of the anchor stage"),
                p(),
            ],
        ),
        Section(
            "discussion", "Discussion", [p(), p(twin), p(), p(twin_b), p(twin2), p(twin2_b), p()]
        ),
        Section("conclusion", "Conclusion", [p(), p()]),
        Section("appA", "Proofs", [p(), eq(), p()], appendix=True),
        Section(
            "appB", "Additional Results", [p(), table("Per-domain results"), p()], appendix=True
        ),
    ]


# -- the scripted changes: each returns the new edition and the truth (old key -> new keys) ----


def _find(paper: list[Section], key: str) -> tuple[Section, int]:
    for section in paper:
        for at, block in enumerate(section.blocks):
            if block.key == key:
                return section, at
    raise KeyError(key)


def _section(paper: list[Section], key: str) -> int:
    return next(i for i, s in enumerate(paper) if s.key == key)


Truth = dict[str, list[str]]


def identity(paper: list[Section]) -> Truth:
    return {b.key: [b.key] for s in paper for b in s.blocks}


def insert_section(paper: list[Section], w: Writer) -> Truth:
    paper.insert(
        1,
        Section(
            "background",
            "Background",
            [Block("n1", "p", w.paragraph()), Block("n2", "p", w.paragraph())],
        ),
    )
    return identity(paper)


def move_paragraph(paper: list[Section], w: Writer) -> Truth:
    truth = identity(paper)
    for key, to, at in (("p2", "discussion", 3), ("p9", "training", 1), ("p14", "conclusion", 0)):
        section, i = _find(paper, key)
        block = section.blocks.pop(i)
        paper[_section(paper, to)].blocks.insert(at, block)
    return truth


def edit_sentence(paper: list[Section], w: Writer) -> Truth:
    truth = identity(paper)
    for key in ("p1", "p5", "p8", "p12", "p16", "p20", "p27", "p30"):
        section, i = _find(paper, key)
        sentences = section.blocks[i].text.split(". ")
        at = w.random.randrange(len(sentences))
        replacement = w.sentence().rstrip(".")
        sentences[at] = replacement if at < len(sentences) - 1 else replacement + "."
        section.blocks[i].text = ". ".join(sentences)
    # a few words changed in two more
    for key in ("p3", "p24"):
        section, i = _find(paper, key)
        words = section.blocks[i].text.split()
        for at in (2, 9):
            words[at] = w.random.choice(WORDS)
        section.blocks[i].text = " ".join(words)
    return truth


def delete_paragraph(paper: list[Section], w: Writer) -> Truth:
    truth = identity(paper)
    for key in ("p3", "p6", "p13", "p21", "p29"):
        section, i = _find(paper, key)
        section.blocks.pop(i)
        truth[key] = []
    return truth


def split_merge(paper: list[Section], w: Writer) -> Truth:
    truth = identity(paper)
    for key in ("p4", "p15"):
        section, i = _find(paper, key)
        block = section.blocks[i]
        sentences = block.text.split(". ")
        half = max(1, len(sentences) // 2)
        first = ". ".join(sentences[:half]) + "."
        second = ". ".join(sentences[half:])
        block.text = first
        section.blocks.insert(i + 1, Block(key + "b", "p", second))
        truth[key] = [key, key + "b"]
    for first_key, second_key in (("p6", "p7"), ("p17", "p18")):
        section, i = _find(paper, first_key)
        _s, j = _find(paper, second_key)
        section.blocks[i].text += " " + section.blocks[j].text
        section.blocks.pop(j)
        truth[second_key] = [first_key]
    return truth


def twins(paper: list[Section], w: Writer) -> Truth:
    truth = identity(paper)
    discussion = paper[_section(paper, "discussion")]
    # a paragraph inserted before the twins moves them all; one twin of the second pair goes,
    # and one word of the first pair's second twin changes
    discussion.blocks.insert(0, Block("n1", "p", w.paragraph()))
    # (discussion: p21, twin p22, p23, its twin p24, twin p25, its twin p26, p27)
    section, i = _find(paper, "p24")
    words = section.blocks[i].text.split()
    words[12] = w.random.choice(WORDS)
    section.blocks[i].text = " ".join(words)
    section, i = _find(paper, "p26")
    section.blocks.pop(i)
    truth["p26"] = []
    return truth


def renumber(paper: list[Section], w: Writer) -> Truth:
    truth = identity(paper)
    method = paper[_section(paper, "method")]
    method.blocks.insert(1, Block("eqnew", "eq", w.equation(99)))
    experiments = paper[_section(paper, "experiments")]
    experiments.blocks.insert(
        0, Block("tablenew", "table", "Statistics of the datasets", w.table())
    )
    return truth


def reorder_appendices(paper: list[Section], w: Writer) -> Truth:
    a, b = _section(paper, "appA"), _section(paper, "appB")
    paper[a], paper[b] = paper[b], paper[a]
    return identity(paper)


def revise(paper: list[Section], w: Writer) -> Truth:
    """A new version that does many things at once: a section inserted, a paragraph moved,
    three rewritten by half, two deleted (one between two twins), one split, two merged, one
    twin deleted, an equation and a caption revised, an equation inserted before the others."""
    truth = identity(paper)
    paper.insert(1, Section("background", "Background", [Block("n1", "p", w.paragraph())]))
    section, i = _find(paper, "p9")
    block = section.blocks.pop(i)
    paper[_section(paper, "conclusion")].blocks.insert(1, block)
    for key in ("p5", "p12", "p19"):
        section, i = _find(paper, key)
        sentences = section.blocks[i].text.split(". ")
        for at in range(1, len(sentences) - 1, 2):
            sentences[at] = w.sentence().rstrip(".")
        section.blocks[i].text = ". ".join(sentences)
    for key in ("p7", "p23", "p26"):
        section, i = _find(paper, key)
        section.blocks.pop(i)
        truth[key] = []
    section, i = _find(paper, "p16")
    sentences = section.blocks[i].text.split(". ")
    section.blocks[i].text = ". ".join(sentences[:2]) + "."
    section.blocks.insert(i + 1, Block("p16b", "p", ". ".join(sentences[2:])))
    truth["p16"] = ["p16", "p16b"]
    section, i = _find(paper, "p1")
    section.blocks[i].text += " " + section.blocks[i + 1].text
    section.blocks.pop(i + 1)
    truth["p2"] = ["p1"]
    section, i = _find(paper, "eq2")
    section.blocks[i].text = section.blocks[i].text.replace("}}{", "+1}}{", 1)
    section, i = _find(paper, "table2")
    section.blocks[i].text = "Ablation of the anchor and gap stages"
    method = paper[_section(paper, "method")]
    method.blocks.insert(0, Block("eqnew", "eq", w.equation(98)))
    return truth


CASES = {
    "insert-section": insert_section,
    "move-paragraph": move_paragraph,
    "edit-sentence": edit_sentence,
    "delete-paragraph": delete_paragraph,
    "split-merge": split_merge,
    "twins": twins,
    "renumber": renumber,
    "reorder-appendices": reorder_appendices,
    "revise": revise,
}


# -- LaTeX -----------------------------------------------------------------------------------

PREAMBLE = r"""%% Constructed edition "{name}" ({which}), by scripts/edition_fixtures.py. CC0.
\documentclass{{article}}
\usepackage{{amsmath}}
\usepackage{{booktabs}}
\title{{Anchored Revision Tracking for Long Technical Documents}}
\author{{Ada Quillfeather\\Institute of Invented Studies}}
\date{{}}
\begin{{document}}
\maketitle
\begin{{abstract}}
{abstract}
\end{{abstract}}
"""

REFERENCES = r"""
\begin{thebibliography}{9}
\bibitem{hunt} J.~W. Hunt and M.~D. McIlroy. An algorithm for differential file comparison. 1976.
\bibitem{myers} E.~W. Myers. An O(ND) difference algorithm and its variations. 1986.
\bibitem{tichy} W.~F. Tichy. The string-to-string correction problem with block moves. 1984.
\end{thebibliography}
\end{document}
"""


def latex(paper: list[Section], abstract: str, name: str, which: str) -> str:
    lines = [PREAMBLE.format(name=name, which=which, abstract=abstract)]
    appendix = False
    for section in paper:
        if section.appendix and not appendix:
            lines.append(r"\appendix")
            appendix = True
        command = "section" if section.level == 1 else "subsection"
        lines.append(f"\\{command}{{{section.title}}}\n")
        for block in section.blocks:
            lines.append(_block(block))
    lines.append(REFERENCES)
    return "\n".join(lines)


def _block(block: Block) -> str:
    if block.kind == "p":
        return block.text + "\n"
    if block.kind == "eq":
        return f"\\begin{{equation}}\n{block.text}\n\\end{{equation}}\n"
    if block.kind == "table":
        rows = [" & ".join(row) + r" \\" for row in block.rows]
        body = "\n".join([r"\toprule", rows[0], r"\midrule", *rows[1:], r"\bottomrule"])
        return (
            f"\\begin{{table}}[h]\n\\caption{{{block.text}}}\n\\centering\n"
            f"\\begin{{tabular}}{{lrr}}\n{body}\n\\end{{tabular}}\n\\end{{table}}\n"
        )
    return (
        f"\\begin{{figure}}[h]\n\\centering\n\\fbox{{pipeline diagram}}\n"
        f"\\caption{{{block.text}}}\n\\end{{figure}}\n"
    )


def _texts(paper: list[Section]) -> dict[str, dict[str, object]]:
    return {
        b.key: {"kind": b.kind, "text": b.text, "rows": b.rows} for s in paper for b in s.blocks
    }


def main() -> None:
    w = Writer(23)
    base = base_paper(w)
    abstract = w.paragraph(3)
    cases: dict[str, object] = {}
    for name, change in CASES.items():
        new = copy.deepcopy(base)
        truth = change(new, Writer(len(name) * 7919))
        for which, paper in (("old", base), ("new", new)):
            folder = OUT / "src" / f"{name}-{which}"
            folder.mkdir(parents=True, exist_ok=True)
            (folder / "main.tex").write_text(latex(paper, abstract, name, which))
        cases[name] = {"truth": truth, "old": _texts(base), "new": _texts(new)}
    (OUT / "cases.json").write_text(json.dumps(cases, indent=1, sort_keys=True) + "\n")
    print(f"wrote {len(cases)} cases under {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
