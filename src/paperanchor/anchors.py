"""Anchors: node ids, section aliases, F/T/E short forms, slugs, and fuzzy suggestions."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field

from rapidfuzz import fuzz, process

from paperanchor.errors import NotFound
from paperanchor.tree import (
    Code,
    Document,
    Equation,
    EquationGroup,
    Figure,
    Inline,
    ListBlock,
    Node,
    Paragraph,
    Quote,
    Section,
    Table,
    Text,
    Theorem,
    child_nodes,
)

_LEVEL_MARKER = re.compile(r"^[A-Za-z]+")
_SHORT = {"F": re.compile(r"^F(\d+)$"), "T": re.compile(r"^T(\d+)$"), "E": re.compile(r"^E(\d+)$")}
_WORD = re.compile(r"[a-z0-9]+")
# Longer than any id, slug or title: such an anchor has no nearest one, and fuzzy matching a
# 100 kB anchor held the event loop for 2.6 s on 2501.11120v1 (a bad-input test found it).
SUGGEST_MAX_CHARS = 300
# The anchor that names the whole paper (contract §4 read), never a node: a section whose slug
# would be "paper" is "paper-2".
WHOLE_PAPER = "paper"
RESERVED = frozenset({WHOLE_PAPER})
# A suggestion is a name the anchor misspells: rapidfuzz's ratio (normalised Indel similarity)
# at least this (`introdution` -> introduction is 96; `nope` -> optimal-control-design, which
# the partial WRatio scored 60, is 15), or one it begins with at least this many characters.
SUGGEST_MIN_SCORE = 80.0
SUGGEST_PREFIX_CHARS = 3
_DIGITS = re.compile(r"[0-9]+")
# contract §11: the blocks `read` marks with their anchor, where they sit in a section's flow (a
# list's items, a figure's panels and a group's rows are parts of the block that holds them).
_MARKED = (Paragraph, Equation, EquationGroup, Figure, Table, Theorem, ListBlock, Code, Quote)
_FLOW = (Section, Paragraph, Theorem)
# The kinds that can be a panel, have a short alias or a printed label or text (printed_labels,
# printed_texts): any other node is indexed by its id and marker only.
_LABELLED = (Section, Figure, Table, Equation, Theorem)
MARK = "¶"
"""A marker's label is `¶` and the block's number in the paper, in document order: one or
two o200k tokens where a LaTeXML id costs four to thirteen (`S3.SS1.SSS0.Px3.p2`)."""


def citable(node: Node, parent: Node | None) -> bool:
    """Whether `read` marks this block with its anchor (contract §11)."""
    if isinstance(node, Text):
        return parent is None or isinstance(parent, Section)  # loose text, not a paragraph's
    return isinstance(node, _MARKED) and (parent is None or isinstance(parent, _FLOW))


def section_alias(section_id: str) -> str | None:
    """`S3.SS2` -> `S3.2`; None when the short form is the id itself."""
    head, *rest = section_id.split(".")
    if not rest:
        return None
    alias = ".".join([head, *(_LEVEL_MARKER.sub("", part) or part for part in rest)])
    return alias if alias != section_id else None


def short_alias(node_id: str) -> str | None:
    """`S3.F1` -> `F1`, `S6.T2` -> `T2`, `S3.E1` -> `E1` (the index in the id)."""
    last = node_id.rsplit(".", 1)[-1]
    for pattern in _SHORT.values():
        if pattern.match(last):
            return last
    return None


def slugify(text: str) -> str:
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    return "-".join(_WORD.findall(ascii_text.lower()))


@dataclass(frozen=True, slots=True)
class Located:
    node: Node
    section_id: str
    top_id: str


@dataclass
class AnchorIndex:
    """Every addressable node of a document, with the ways to name it."""

    document: Document
    paper_label: str
    nodes: dict[str, Located] = field(default_factory=dict)
    aliases: dict[str, str] = field(default_factory=dict)
    slugs: dict[str, str] = field(default_factory=dict)
    slug_of: dict[str, str] = field(default_factory=dict)
    alias_of: dict[str, str] = field(default_factory=dict)
    labels: dict[tuple[str, str], str] = field(default_factory=dict)
    """(kind, printed label) -> node id: ("section", "3.2"), ("table", "ii"), ("figure", "3b")."""
    folded: dict[str, str] = field(default_factory=dict)
    sections: list[Section] = field(default_factory=list)
    panel_ids: set[str] = field(default_factory=set)
    note_sections: dict[str, tuple[str, str]] = field(default_factory=dict)
    marks: dict[str, str] = field(default_factory=dict)
    """node id -> its marker label (`¶12`), which resolves to it as an alias does"""
    printed: dict[str, str] = field(default_factory=dict)
    """a heading or label as the outline and the pages print it, folded (`printed_key`) ->
    node id: `3.1 design`, `design`, `theorem 3.1` (a paragraph heading), `algorithm 1`"""
    _slug_next: dict[str, int] = field(default_factory=dict)

    @classmethod
    def build(cls, document: Document, paper_label: str) -> AnchorIndex:
        index = cls(document, paper_label)
        # tree.walk's order, with only what `_add` reads of where a node sits (its records
        # cost a fifth of the build): node, parent, nearest section, root
        stack: list[tuple[Node, Node | None, Section | None, Node]] = [
            (root, None, root if isinstance(root, Section) else None, root)
            for root in reversed(document.roots())
        ]
        while stack:
            node, parent, section, top = stack.pop()
            index._add(node, parent, section, top)
            if isinstance(node, Text):
                continue  # a run of text holds no nodes: most nodes, child_nodes's longest way
            for child in reversed(child_nodes(node)):
                inner = child if isinstance(child, Section) else section
                stack.append((child, node, inner, top))
        for note_id, note in document.footnotes.items():
            if note_id not in index.nodes:
                section_id, top_id = index.note_sections.get(note_id, ("", ""))
                holder = Text(note_id, Inline(note.content.markdown, note.content.text))
                index.nodes[note_id] = Located(holder, section_id, top_id)
        for table in (index.nodes, index.aliases, index.slugs):
            for key, value in table.items():
                target = value if isinstance(value, str) else key
                index.folded.setdefault(key.lower(), target)
        index._slug_next.clear()
        return index

    def _add(self, node: Node, parent: Node | None, section: Section | None, top: Node) -> None:
        section_id = section.id if section is not None else top.id
        if isinstance(node, Section):
            self.sections.append(node)
            alias = section_alias(node.id)
            if alias:
                self.aliases.setdefault(alias, node.id)
                self.alias_of[node.id] = alias
            slug = self._new_slug(slugify(node.title.text) or slugify(node.kind) or "section")
            self.slugs[slug] = node.id
            self.slug_of[node.id] = slug
        self.nodes.setdefault(node.id, Located(node, section_id, top.id))
        if citable(node, parent) and node.id not in self.marks:
            label = f"{MARK}{len(self.marks) + 1}"
            self.marks[node.id] = label
            self.aliases[label] = node.id
        if isinstance(node, Text):
            for note_id in node.notes:
                self.note_sections.setdefault(note_id, (section_id, top.id))
        if not isinstance(node, _LABELLED):
            return  # most nodes: no panel, short alias or printed label (printed_labels)
        is_panel = isinstance(node, Figure | Table) and isinstance(parent, Figure | Table)
        if is_panel:
            self.panel_ids.add(node.id)
        elif isinstance(node, Figure | Table | Equation):
            short = short_alias(node.id)
            if short:
                self.aliases.setdefault(short, node.id)
                self.alias_of.setdefault(node.id, short)
        for kind_label in printed_labels(node, parent):
            self.labels.setdefault(kind_label, node.id)
        for text in printed_texts(node, parent):
            key = printed_key(text)
            if key:
                self.printed.setdefault(key, node.id)

    def mark(self, node: Node) -> str | None:
        """The marker label `read` shows before this block, None when it shows none (a node
        another of the same id shadows, on a hostile page, is not the one the label names)."""
        label = self.marks.get(node.id)
        if label is None or self.nodes[node.id].node is not node:
            return None
        return label

    def _new_slug(self, base: str) -> str:
        """`base`, else `base-2`, `base-3` … in document order; linear in the number of
        sections however many share a title (a counter per base, not a scan from 2)."""
        count = self._slug_next.get(base, 1)
        slug = base if count == 1 else f"{base}-{count}"
        while slug in self.slugs or slug in RESERVED:
            count += 1
            slug = f"{base}-{count}"
        self._slug_next[base] = count + 1
        return slug

    def resolve(self, anchor: str) -> Located:
        """Exact id, alias, slug, printed label, then the same case-insensitively (contract §3)."""
        node_id = self.quick(anchor)
        if node_id is not None:
            return self.nodes[node_id]
        raise NotFound(self._not_found_detail(anchor.strip()))

    def quick(self, anchor: str) -> str | None:
        """The node id `anchor` names, found without fuzzy matching, or None."""
        if anchor in self.nodes:
            # the exact id first: a hostile page's id may end in white space (LaTeXML's never
            # do), and every id the outline lists must read its own node
            return anchor
        key = anchor.strip()
        node_id = (
            (key if key in self.nodes else self.aliases.get(key) or self.slugs.get(key))
            or self._printed(key)
            or self.printed.get(printed_key(key))
            or self.folded.get(key.lower())
        )
        return node_id if node_id and node_id in self.nodes else None

    def _printed(self, anchor: str) -> str | None:
        for key in label_queries(anchor):
            node_id = self.labels.get(key)
            if node_id is not None:
                return node_id
        return None

    def _not_found_detail(self, anchor: str) -> str:
        shown = anchor if len(anchor) <= 80 else anchor[:80] + "…"
        detail = f'No anchor "{shown}" in {self.paper_label}'
        suggestions = self.suggest(anchor)
        if suggestions:
            detail += "; did you mean " + ", ".join(suggestions) + "?"
        return detail

    def suggest(self, anchor: str, limit: int = 3) -> list[str]:
        """Up to `limit` anchors close to `anchor`: a name it misspells (similarity at least
        SUGGEST_MIN_SCORE over ids, aliases, slugs and titles), one it begins (`intro`), or the
        section whose id it extends (`S2.p3` -> `S2`); nothing rather than a far guess."""
        wanted = anchor.lower()
        if not wanted or len(anchor) > SUGGEST_MAX_CHARS:
            return []
        choices: dict[str, str] = {}
        for section in self.sections:
            for name in (
                section.id,
                self.alias_of.get(section.id),
                self.slug_of.get(section.id),
                section.title.text,
            ):
                if name:
                    choices.setdefault(name.lower(), section.id)
        for alias, node_id in self.aliases.items():
            if not alias.startswith(MARK):  # a marker is read off a page, never guessed
                choices.setdefault(alias.lower(), node_id)
        scored: dict[str, float] = {}
        numbers = _DIGITS.findall(wanted)
        for name, score, _ in process.extract(
            wanted, list(choices), scorer=fuzz.ratio, limit=limit * 4
        ):
            # a name that differs in its numbers is another node (`theorem 9.9`, `theorem 3.1`)
            if score >= SUGGEST_MIN_SCORE and _DIGITS.findall(name) == numbers:
                scored[choices[name]] = max(score, scored.get(choices[name], 0.0))
        if len(wanted) >= SUGGEST_PREFIX_CHARS:
            for name, node_id in choices.items():
                if name.startswith(wanted):
                    scored.setdefault(node_id, SUGGEST_MIN_SCORE)
        holder = next(
            (
                section.id
                for section in reversed(self.sections)
                if wanted.startswith(section.id.lower() + ".")
            ),
            None,
        )
        if holder is not None:
            scored.setdefault(holder, SUGGEST_MIN_SCORE)
        out: list[str] = []
        for node_id in sorted(scored, key=lambda found: -scored[found]):
            slug = self.slug_of.get(node_id)
            label = f"{slug} ({node_id})" if slug else node_id
            if label not in out:
                out.append(label)
        return out[:limit]


# -- printed labels (contract §3): what a reader quotes from the text ----------------------------

# The kind word a reader writes before a label, as the kind it names.
_KIND_WORDS = {
    "§": "section",
    "section": "section",
    "sections": "section",
    "sec": "section",
    "secs": "section",
    "sect": "section",
    "chapter": "section",
    "ch": "section",
    "subsection": "section",
    "appendix": "appendix",
    "app": "appendix",
    "figure": "figure",
    "figures": "figure",
    "fig": "figure",
    "figs": "figure",
    "table": "table",
    "tables": "table",
    "tab": "table",
    "tbl": "table",
    "equation": "equation",
    "equations": "equation",
    "eq": "equation",
    "eqs": "equation",
    "eqn": "equation",
    "theorem": "theorem",
    "thm": "theorem",
    "lemma": "lemma",
    "lem": "lemma",
    "definition": "definition",
    "def": "definition",
    "defn": "definition",
    "corollary": "corollary",
    "cor": "corollary",
    "proposition": "proposition",
    "prop": "proposition",
    "remark": "remark",
    "rem": "remark",
    "example": "example",
    "assumption": "assumption",
    "conjecture": "conjecture",
    "claim": "claim",
    "hypothesis": "hypothesis",
    "problem": "problem",
    "question": "question",
    "observation": "observation",
    "fact": "fact",
    "algorithm": "algorithm",
    "alg": "algorithm",
    "listing": "listing",
}
# A label is short; a longer anchor is not a printed label (and costs no pattern time).
_LABEL_MAX = 40
_QUERY = re.compile(r"^(?:(?P<word>§|[^\W\d_]{1,20})\.?\s*)?(?P<label>\S.{0,39})$")
_PARENS = re.compile(r"^\((?P<inner>[^()]{1,38})\)$")
_PANEL = re.compile(r"^(?P<figure>[\w.\-]{1,20}?)\s*\(?(?P<panel>[a-z])\)?$")
_THEOREM_LABEL = re.compile(r"^(?P<word>[^\W\d_]+)\.?\s+(?P<number>[\w.\-]{1,20}?)[.:]?(?:\s|$)")


def _label(text: str) -> str:
    return " ".join(text.lower().split()).rstrip(".:")


def printed_labels(node: Node, parent: Node | None) -> list[tuple[str, str]]:
    """The (kind, label) keys a node answers to by what the paper prints for it."""
    if isinstance(node, Section):
        if not node.number or node.kind in ("body", "abstract", "bibliography"):
            return []
        number = _label(node.number)
        keys = [("section", number)]
        if node.kind == "appendix" or (node.tag and node.tag.lower().startswith("appendix")):
            keys.append(("appendix", number))
        return keys
    if isinstance(node, Figure | Table) and node.number:
        number = _label(node.number)
        if isinstance(parent, Figure | Table):
            # a panel "(b)" of figure 3 is "Fig. 3b"
            return [("figure", f"{_label(parent.number)}{number}")] if parent.number else []
        if isinstance(node, Table):
            return [("table", number)] if node.is_float else []
        return [(node.kind if node.kind != "float" else "figure", number)]
    if isinstance(node, Equation) and node.number:
        return [("equation", _label(node.number))]
    if isinstance(node, Theorem):
        match = _THEOREM_LABEL.match(_label(node.label.text) + " ")
        if match:
            word = _KIND_WORDS.get(match["word"], match["word"])
            number = match["number"]
            return list(dict.fromkeys([(word, number), (node.kind, number)]))
    return []


_PRINTED_MAX = 300  # a heading longer than this is not looked up (nor is an anchor)


def printed_key(text: str) -> str:
    """A heading or label as it is compared: case-blind, white space squashed, without the
    trailing `.` or `:` a run-in label ends with."""
    if len(text) > _PRINTED_MAX:
        return ""
    return " ".join(text.lower().split()).rstrip(".:").rstrip()


def printed_texts(node: Node, parent: Node | None) -> list[str]:
    """What the outline and the pages print for a node, whole: a section's title, its number
    and title, its tag and title (`Appendix A Proofs`); a float's tag (`TABLE I`,
    `Algorithm 1`); a theorem-like block's label (`Definition 2.1 (6)`, not a bare `Proof`)."""
    if isinstance(node, Section):
        if node.kind in ("body", "abstract", "bibliography"):
            return []
        title = node.title.text.strip()
        texts = [title] if title else []
        if node.number:
            texts.append(f"{node.number} {title}")
        if node.tag.strip():
            texts.append(f"{node.tag.strip()} {title}")
        return texts
    if isinstance(node, Figure | Table) and not isinstance(parent, Figure | Table):
        return [node.tag.strip()] if node.tag.strip() else []
    if isinstance(node, Theorem):
        label = node.label.text.strip()
        return [label] if _THEOREM_LABEL.match(printed_key(label) + " ") else []
    return []


def label_queries(anchor: str) -> list[tuple[str, str]]:
    """The (kind, label) keys an anchor may mean, most specific first: `Table 2` is a table,
    `(4)` an equation, a bare `3.2` a section (an appendix's `A` among them)."""
    text = anchor.strip().lower()
    if not text or len(text) > _LABEL_MAX:
        return []
    match = _QUERY.match(text)
    if match is None:
        return []
    word, label = match["word"], match["label"].strip().rstrip(".:")
    kind = _KIND_WORDS.get(word) if word else None
    if word and kind is None:
        # not a kind word: the whole text is the label ("IV-A", "A.1")
        kind, label = None, text.rstrip(".:")
    parens = _PARENS.match(label)
    if kind is None:
        if parens:
            return [("equation", parens["inner"].strip())]
        return [("section", label), ("appendix", label)]
    if kind == "equation" and parens:
        return [("equation", parens["inner"].strip())]
    if kind == "figure":
        keys = [("figure", label)]
        panel = _PANEL.match(label)
        if panel:
            keys.append(("figure", f"{panel['figure']}{panel['panel']}"))
        return keys
    if kind == "appendix":
        return [("appendix", label), ("section", label)]
    return [(kind, label)]
