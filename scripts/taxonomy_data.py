"""Write src/paperanchor/data/arxiv_taxonomy.json from the corpus copy of arXiv's taxonomy.

The source is ../shared/corpus/taxonomy/arxiv_taxonomy_definitions.json, a static conversion
of arXiv/arxiv-base arxiv/taxonomy/definitions.py (MIT, Cornell University). We keep what the
service needs (groups, archives, categories, aliases) and drop arXiv's test and placeholder
groups. Run: .venv/bin/python scripts/taxonomy_data.py [CORPUS]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "src" / "paperanchor" / "data" / "arxiv_taxonomy.json"


def main() -> None:
    corpus = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT.parent / "shared" / "corpus"
    source = json.loads((corpus / "taxonomy" / "arxiv_taxonomy_definitions.json").read_text())
    groups = {
        gid: group for gid, group in source["GROUPS"].items() if not group.get("is_test")
    }
    archives = {
        aid: archive for aid, archive in source["ARCHIVES"].items() if archive["in_group"] in groups
    }
    aliases = source["CATEGORY_ALIASES"]
    categories = []
    for cid, category in source["CATEGORIES"].items():
        archive = archives.get(category["in_archive"])
        if archive is None:
            continue
        categories.append(
            {
                "id": cid,
                "name": category["full_name"],
                "archive": archive["id"],
                "group": archive["in_group"],
                "active": category["is_active"],
                "aliasOf": aliases.get(cid),
                "description": category.get("description"),
            }
        )
    data = {
        "source": {
            key: source["_provenance"][key]
            for key in ("source_repo", "source_path", "source_commit", "licence")
        },
        "groups": [{"id": gid, "name": group["full_name"]} for gid, group in groups.items()],
        "archives": [
            {
                "id": aid,
                "name": archive["full_name"],
                "group": archive["in_group"],
                "active": archive["is_active"],
            }
            for aid, archive in archives.items()
        ],
        "categories": categories,
        "aliases": aliases,
    }
    OUT.write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"{OUT.relative_to(ROOT)}: {len(categories)} categories, {len(aliases)} aliases")


if __name__ == "__main__":
    main()
