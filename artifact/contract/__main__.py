"""``python -m artifact.contract [--check]``: regenerate the field tables of the schema documents.

Each document holds its tables between ``<!-- fields: begin -->`` and ``<!-- fields: end -->``;
the prose around them is written by hand. ``--check`` changes nothing and exits 1 when a
document differs from its contract (a test runs the same check).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from artifact import files, paths
from artifact.contract import accsplit as accsplit_contract
from artifact.contract import comparison as comparison_contract
from artifact.contract import core as core_contract
from artifact.contract import realism as realism_contract
from artifact.contract import schema_markdown
from artifact.contract import summary as summary_contract
from artifact.contract import workload as workload_contract
from artifact.errors import ArtifactError, cli

BEGIN, END = "<!-- fields: begin (python -m artifact.contract) -->", "<!-- fields: end -->"
# Each schema document and the root of the file it describes.
DOCUMENTS: dict[Path, type] = {
    paths.ROOT / "docs" / "summary-schema.md": summary_contract.Summary,
    paths.ROOT / "docs" / "workload-schema.md": workload_contract.Workload,
    paths.ROOT / "docs" / "accsplit-schema.md": accsplit_contract.AccSplit,
    paths.ROOT / "docs" / "realism-schema.md": realism_contract.Realism,
    paths.ROOT / "docs" / "comparison-schema.md": comparison_contract.Comparison,
    paths.ROOT / "docs" / "core-schema.md": core_contract.Core,
}


def regenerated(doc: Path, root: type) -> str:
    """The document's text with its field tables generated from ``root``."""
    text = doc.read_text(encoding="utf-8")
    head, sep, rest = text.partition(BEGIN)
    _, sep2, tail = rest.partition(END)
    if not sep or not sep2:
        raise ArtifactError(f"{doc}: no '{BEGIN}' ... '{END}' block to generate into")
    return f"{head}{BEGIN}\n\n{schema_markdown(root)}\n{END}{tail}"


@cli
def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m artifact.contract", description=__doc__)
    p.add_argument("--check", action="store_true", help="only report documents out of date")
    args = p.parse_args(argv)
    stale = []
    for doc, root in DOCUMENTS.items():
        text = regenerated(doc, root)
        if text != doc.read_text(encoding="utf-8"):
            stale.append(doc)
            if not args.check:
                files.write_text(doc, text)
                print(f"updated {doc.relative_to(paths.ROOT)}")
    if args.check and stale:
        for doc in stale:
            print(f"{doc.relative_to(paths.ROOT)}: out of date; run python -m artifact.contract",
                  file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
