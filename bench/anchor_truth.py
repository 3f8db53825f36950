"""The truth of `make bench-anchors`: which block of one edition each block of the other is.

Constructed pairs (fixtures/editions): the truth is known by construction (cases.json names,
for each block of the old edition, the blocks of the new one it became); a block's key is
turned into its node id by finding the block's known text in the converted page, which is
exact text, not an alignment. Real pairs (corpus/pairs): the gold is data, built once by
`python -m bench.anchor_truth --gold` with an exhaustive comparison that shares nothing with
the resolver (every block against every block of its kind, mutual best matches), reviewed
by hand where it was unsure, and committed as bench/anchor_gold.json.
"""

from __future__ import annotations

import argparse
import json
import os
from dataclasses import dataclass
from pathlib import Path

from rapidfuzz import fuzz

from paperanchor.editions import Unit, block_units
from paperanchor.parse import parse_document
from paperanchor.quotes import comparable
from paperanchor.tree import Document

ROOT = Path(__file__).resolve().parent.parent
EDITIONS = ROOT / "fixtures" / "editions"
GOLD = ROOT / "bench" / "anchor_gold.json"
PAIRS = Path(os.environ.get("PAPERANCHOR_CORPUS", ROOT.parent / "shared" / "corpus")) / "pairs"
_KINDS = {"p": "text", "eq": "equation", "table": "float", "fig": "float"}


@dataclass(frozen=True, slots=True)
class Target:
    """One block of the `from` edition and where it is in the other (empty: deleted)."""

    anchor: str
    kind: str
    truth: tuple[str, ...]
    status: str
    """same, moved, edited or deleted"""


@dataclass
class Case:
    name: str
    group: str
    """constructed or real"""
    old: Document
    new: Document
    forward: list[Target]
    backward: list[Target]
    old_url: str = ""
    new_url: str = ""


def _status(old: Unit, new: list[Unit]) -> str:
    if not new:
        return "deleted"
    if len(new) > 1 or old.text != new[0].text:
        return "edited"
    return "same" if old.id == new[0].id else "moved"


def _targets(olds: list[Unit], news: dict[str, Unit], truth: dict[str, list[str]]) -> list[Target]:
    found = []
    for unit in olds:
        if unit.id not in truth:
            continue
        became = [news[n] for n in truth[unit.id]]
        found.append(Target(unit.id, unit.kind, tuple(truth[unit.id]), _status(unit, became)))
    return found


def _reverse(truth: dict[str, list[str]], news: list[Unit]) -> dict[str, list[str]]:
    back: dict[str, list[str]] = {u.id: [] for u in news}
    for old, became in truth.items():
        for new in became:
            back.setdefault(new, []).append(old)
    return back


def _by_text(units: list[Unit], kind: str, text: str) -> Unit:
    """The unit of that kind whose text is the known text (digits aside: printed numbers)."""
    wanted = comparable(text)
    best = max(
        (u for u in units if u.kind == kind),
        key=lambda u: fuzz.ratio(wanted, u.text),
    )
    score = fuzz.ratio(wanted, best.text)
    if score < 90:
        raise ValueError(f"no block holds {text[:60]!r} (best {best.id}, {score:.0f})")
    return best


def _constructed_text(block: dict[str, object]) -> str:
    text = str(block["text"])
    if block["kind"] == "eq":
        return text
    if block["kind"] == "table":
        cells = " ".join(" | ".join(row) for row in block["rows"])  # type: ignore[attr-defined]
        return f"{text} {cells}"
    if block["kind"] == "fig":
        return text
    return text


def constructed() -> list[Case]:
    """The scripted pairs, their keys turned into node ids."""
    spec = json.loads((EDITIONS / "cases.json").read_text())
    cases = []
    for name, case in spec.items():
        old = parse_document((EDITIONS / "html" / f"{name}-old.html").read_bytes(), "")
        new = parse_document((EDITIONS / "html" / f"{name}-new.html").read_bytes(), "")
        old_units, new_units = block_units(old), block_units(new)
        old_id = {
            key: _by_text(old_units, _KINDS[str(b["kind"])], _constructed_text(b)).id
            for key, b in case["old"].items()
        }
        new_id = {
            key: _by_text(new_units, _KINDS[str(b["kind"])], _constructed_text(b)).id
            for key, b in case["new"].items()
        }
        truth = {
            old_id[k]: [new_id[n] for n in v]
            for k, v in case["truth"].items()
            if k in old_id  # the generator's truth may name the new edition's own blocks too
        }
        # blocks the generator does not script (references, the abstract) keep their text
        for units in (old_units,):
            for u in units:
                if u.id not in truth and u.kind in ("reference",):
                    twin = [n for n in new_units if n.kind == u.kind and n.text == u.text]
                    truth[u.id] = [twin[0].id] if twin else []
        news = {u.id: u for u in new_units}
        olds = {u.id: u for u in old_units}
        forward = _targets(old_units, news, truth)
        # backward: the new edition's scripted blocks and references (not its abstract)
        known = set(new_id.values()) | {u.id for u in new_units if u.kind == "reference"}
        back = {k: v for k, v in _reverse(truth, new_units).items() if k in known}
        backward = _targets(new_units, olds, back)
        cases.append(Case(name, "constructed", old, new, forward, backward))
    return cases


# -- the real pairs' gold ------------------------------------------------------------------------


def _gold_pair(olds: list[Unit], news: list[Unit]) -> tuple[dict[str, list[str]], list[str]]:
    """Exhaustive mutual best matches per kind; the ids it is unsure of to review by hand."""
    truth: dict[str, list[str]] = {}
    unsure: list[str] = []
    for kind in dict.fromkeys(u.kind for u in olds):
        os_ = [u for u in olds if u.kind == kind]
        ns = [u for u in news if u.kind == kind]
        if not ns:
            for u in os_:
                truth[u.id] = []
            continue
        scores = [[fuzz.ratio(o.text, n.text) for n in ns] for o in os_]
        best_new = [max(range(len(ns)), key=lambda j, i=i: scores[i][j]) for i in range(len(os_))]
        best_old = [max(range(len(os_)), key=lambda i, j=j: scores[i][j]) for j in range(len(ns))]
        # identical texts that repeat: the k-th with the k-th
        seen: dict[str, list[int]] = {}
        for j, n in enumerate(ns):
            seen.setdefault(n.text, []).append(j)
        used: dict[str, int] = {}
        for i, o in enumerate(os_):
            same = seen.get(o.text)
            if same:
                k = used.get(o.text, 0)
                used[o.text] = k + 1
                truth[o.id] = [ns[same[k]].id] if k < len(same) else []
                continue
            j = best_new[i]
            score = scores[i][j]
            contained = _containing(o, ns)
            if score >= 90 and best_old[j] == i:
                truth[o.id] = [ns[j].id]
            elif contained:
                # split (pieces of it) or merged (into a longer one): every piece is right
                truth[o.id] = contained
            elif score < 50:
                truth[o.id] = []
            else:
                truth[o.id] = [ns[j].id] if best_old[j] == i else []
                unsure.append(o.id)
    return truth, unsure


def _containing(unit: Unit, others: list[Unit]) -> list[str]:
    """The blocks that hold most of `unit`'s text, or whose text `unit` holds: a paragraph
    merged into a longer one, or split into shorter ones (partial similarity 95 or more,
    pieces of 30 characters at least)."""
    found = []
    for other in others:
        short, long = sorted((unit.text, other.text), key=len)
        if len(short) < 30 or len(short) > 0.9 * len(long):
            continue
        if fuzz.partial_ratio(short, long, score_cutoff=95):
            found.append(other.id)
    return found


def _real_pairs() -> list[tuple[str, Path, Path]]:
    found = []
    for arxiv in sorted(PAIRS.glob("*.arxiv.html")):
        stem = arxiv.name.removesuffix(".arxiv.html")
        bare = stem.split("v")[0] if "v" in stem else stem
        ar5iv = PAIRS / f"{bare}.ar5iv.html"
        if ar5iv.exists():
            found.append((bare, ar5iv, arxiv))
    return found


# The review by hand of the blocks the comparison was unsure of (similarity 50-90, or not
# mutual best: 49 before containment was added, 30 after): where a reader sees another answer
# than the comparison's, it is written here; blocks a reader cannot decide (a paragraph
# rewritten into another whose topic it shares) are left out of the gold. Every other unsure
# block kept the comparison's answer.
REVIEWED: dict[str, dict[str, list[str]]] = {
    "2310.08754": {
        # the fertility figure, recaptioned; the parity figure (new S4.F2) reads more alike
        "S4.F1": ["S4.F1"],
        # two tables (algorithm and library; vocabulary size) merged into one
        "S5.T2": ["S5.T5"],
        "S5.T3": ["S5.T5"],
    },
    # the title and author block, one paragraph on ar5iv, two on arXiv (the authors' line
    # with its affiliation marks as math is not contained in the old text as written)
    "2401.03129": {"p1": ["p1", "p2"]},
    "2403.04706": {"p1": ["p1", "p2"]},
}
UNDECIDED: dict[str, list[str]] = {
    "2310.08754": [
        "S5.SS2.SSS0.Px1.p3",
        "S5.SS2.SSS0.Px1.p4",
        "S5.SS2.SSS0.Px2.p2",
        "S5.SS3.p2",
    ],
}


def build_gold() -> dict[str, object]:
    """The gold of every real pair: ar5iv edition (old) -> arXiv edition (new)."""
    gold: dict[str, object] = {}
    for name, ar5iv, arxiv in _real_pairs():
        old = block_units(parse_document(ar5iv.read_bytes(), ""))
        new = block_units(parse_document(arxiv.read_bytes(), ""))
        truth, unsure = _gold_pair(old, new)
        truth.update(REVIEWED.get(name, {}))
        for anchor in UNDECIDED.get(name, []):
            truth.pop(anchor, None)
        gold[name] = {
            "old": ar5iv.name,
            "new": arxiv.name,
            "truth": truth,
            "unsure": unsure,
            "undecided": UNDECIDED.get(name, []),
        }
    return gold


def real() -> list[Case]:
    """The corpus pairs with their committed gold."""
    gold = json.loads(GOLD.read_text())
    cases = []
    for name, entry in gold.items():
        old = parse_document((PAIRS / entry["old"]).read_bytes(), "")
        new = parse_document((PAIRS / entry["new"]).read_bytes(), "")
        old_units, new_units = block_units(old), block_units(new)
        truth = dict(entry["truth"])
        news = {u.id: u for u in new_units}
        olds = {u.id: u for u in old_units}
        forward = _targets(old_units, news, truth)
        back = _reverse(truth, new_units)
        # a new block nothing became, nearest to an undecided old block, is undecided too
        for anchor in entry["undecided"]:
            undecided = olds[anchor]
            for u in new_units:
                nothing = u.id in back and not back[u.id] and u.kind == undecided.kind
                if nothing and fuzz.ratio(u.text, undecided.text) >= 50:
                    del back[u.id]
        backward = _targets(new_units, olds, back)
        cases.append(Case(name, "real", old, new, forward, backward))
    return cases


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--gold", action="store_true", help="rebuild bench/anchor_gold.json")
    args = parser.parse_args()
    if args.gold:
        gold = build_gold()
        GOLD.write_text(json.dumps(gold, indent=1, sort_keys=True) + "\n")
        unsure = sum(len(v["unsure"]) for v in gold.values())  # type: ignore[index,arg-type]
        print(f"wrote {GOLD.relative_to(ROOT)}: {len(gold)} pairs, {unsure} to review")
    for case in constructed():
        counts: dict[str, int] = {}
        for t in case.forward:
            counts[t.status] = counts.get(t.status, 0) + 1
        print(case.name, len(case.forward), len(case.backward), counts)


if __name__ == "__main__":
    main()
