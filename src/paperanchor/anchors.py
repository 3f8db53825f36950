"""Anchors: node ids, section aliases, F/T/E short forms, slugs, and fuzzy suggestions."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field

from rapidfuzz import fuzz, process

from paperanchor.errors import NotFound
from paperanchor.tree import (
    Bibliography,
    Block,
    Document,
    Equation,
    EquationGroup,
    Figure,
    Inline,
    ListBlock,
    Paragraph,
    Quote,
    Section,
    Table,
    Text,
    Theorem,
)

Node = Block
_LEVEL_MARKER = re.compile(r"^[A-Za-z]+")
_SHORT = {"F": re.compile(r"^F(\d+)$"), "T": re.compile(r"^T(\d+)$"), "E": re.compile(r"^E(\d+)$")}
_WORD = re.compile(r"[a-z0-9]+")
# Longer than any id, slug or title: such an anchor has no nearest one, and fuzzy matching a
# 100 kB anchor held the event loop for 2.6 s on 2501.11120v1 (a bad-input test found it).
SUGGEST_MAX_CHARS = 300


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
    folded: dict[str, str] = field(default_factory=dict)
    sections: list[Section] = field(default_factory=list)
    panel_ids: set[str] = field(default_factory=set)
    note_sections: dict[str, tuple[str, str]] = field(default_factory=dict)

    @classmethod
    def build(cls, document: Document, paper_label: str) -> AnchorIndex:
        index = cls(document, paper_label)
        if document.abstract is not None:
            index._walk(document.abstract, "abstract", "abstract")
        for block in document.blocks:
            top = block.id
            index._walk(block, top, top)
        for note_id, note in document.footnotes.items():
            if note_id not in index.nodes:
                section_id, top_id = index.note_sections.get(note_id, ("", ""))
                holder = Text(note_id, Inline(note.content.markdown, note.content.text))
                index.nodes[note_id] = Located(holder, section_id, top_id)
        for table in (index.nodes, index.aliases, index.slugs):
            for key, value in table.items():
                target = value if isinstance(value, str) else key
                index.folded.setdefault(key.lower(), target)
        return index

    def _walk(self, node: Node, section_id: str, top_id: str) -> None:
        if isinstance(node, Section):
            section_id = node.id
            self.sections.append(node)
            alias = section_alias(node.id)
            if alias:
                self.aliases.setdefault(alias, node.id)
                self.alias_of[node.id] = alias
            base = slugify(node.title.text) or slugify(node.kind) or "section"
            slug = base
            count = 1
            while slug in self.slugs:
                count += 1
                slug = f"{base}-{count}"
            self.slugs[slug] = node.id
            self.slug_of[node.id] = slug
        self.nodes.setdefault(node.id, Located(node, section_id, top_id))
        if isinstance(node, Text):
            for note_id in node.notes:
                self.note_sections.setdefault(note_id, (section_id, top_id))
        if isinstance(node, Figure | Table | Equation):
            short = short_alias(node.id)
            if short and node.id not in self.panel_ids:
                self.aliases.setdefault(short, node.id)
                self.alias_of.setdefault(node.id, short)
        for child in _children(node):
            if isinstance(child, Figure | Table) and isinstance(node, Figure | Table):
                self.panel_ids.add(child.id)
            self._walk(child, section_id, top_id)

    def resolve(self, anchor: str) -> Located:
        """Exact id, alias, slug, then the same case-insensitively; else `not-found`."""
        key = anchor.strip()
        node_id = (
            key if key in self.nodes else self.aliases.get(key) or self.slugs.get(key)
        ) or self.folded.get(key.lower())
        if node_id and node_id in self.nodes:
            return self.nodes[node_id]
        raise NotFound(self._not_found_detail(key))

    def _not_found_detail(self, anchor: str) -> str:
        shown = anchor if len(anchor) <= 80 else anchor[:80] + "…"
        detail = f'No anchor "{shown}" in {self.paper_label}'
        suggestions = self.suggest(anchor)
        if suggestions:
            detail += "; did you mean " + ", ".join(suggestions) + "?"
        return detail

    def suggest(self, anchor: str, limit: int = 3) -> list[str]:
        """Up to `limit` nearest anchors, fuzzy over ids, aliases, slugs and titles."""
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
            choices.setdefault(alias.lower(), node_id)
        if not choices or not anchor or len(anchor) > SUGGEST_MAX_CHARS:
            return []
        found = process.extract(anchor.lower(), list(choices), scorer=fuzz.WRatio, limit=limit * 4)
        out: list[str] = []
        for name, score, _ in found:
            # WRatio scores a 2-letter alias inside any longer word highly ("e1" in "nowhere")
            if score < 60 or (len(name) < 3 and len(anchor) > len(name) + 1):
                continue
            node_id = choices[name]
            slug = self.slug_of.get(node_id)
            label = f"{slug} ({node_id})" if slug else node_id
            if label not in out:
                out.append(label)
            if len(out) == limit:
                break
        return out


def _children(node: Node) -> list[Node]:
    if isinstance(node, Section | Paragraph | Theorem | Quote):
        return list(node.blocks)
    if isinstance(node, EquationGroup):
        return list(node.rows)
    if isinstance(node, Figure):
        return [*node.panels, *node.blocks]
    if isinstance(node, Table):
        return list(node.panels)
    if isinstance(node, ListBlock):
        return [b for item in node.items for b in item.blocks]
    if isinstance(node, Bibliography):
        return []
    return []
