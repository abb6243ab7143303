from __future__ import annotations

import subprocess
import sys

from artifact import paths
from artifact.render import figures, tables, tasks


def test_task_names_match_renderers() -> None:
    assert tasks.TABLES == tables.NAMES
    assert tasks.FIGURES == figures.NAMES


def test_every_task_declares_deps_targets_and_doc() -> None:
    for fn in (tasks.task_tables, tasks.task_figures, tasks.task_manuscript, tasks.task_verify,
               tasks.task_manifest):
        assert fn.__doc__
        out = fn()
        subtasks = [out] if isinstance(out, dict) else list(out)
        for t in subtasks:
            assert t["file_dep"] and t["targets"]


def test_one_table_template_touches_one_subtask() -> None:
    tpl = str(paths.TEMPLATES / "tables" / "hardware.md.j2")
    users = [t["name"] for t in tasks.task_tables() if tpl in t["file_dep"]]
    assert users == ["hardware"]


def test_task_definitions_stay_light() -> None:
    code = ("import sys, artifact.render.tasks; "
            "print(sorted(m for m in ('matplotlib', 'jinja2', 'pypandoc') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=paths.ROOT)
    assert out.stdout.strip() == "[]"
