from __future__ import annotations

import subprocess
import sys

from artifact import imports, paths
from artifact.analysis.task import task_analysis
from artifact.render import catalogue, figures, tables, tasks


def test_every_catalogue_entry_has_a_renderer_and_templates() -> None:
    assert (tables.CORE_TABLES + tuple(tables.CONTEXTS) + tables.COSTMODEL_TABLES
            + tuple(tables.ACCSPLIT_CONTEXTS)
            + tables.REALISM_TABLES + tuple(tables.WORKLOAD_CONTEXTS)) == catalogue.TABLE_NAMES
    assert (tuple(figures.CORE_FIGURES) + tuple(figures.FIGURES)
            + tuple(figures.ACCSPLIT_FIGURES)
            + tuple(figures.REALISM_FIGURES)
            + tuple(figures.WORKLOAD_FIGURES)) == catalogue.FIGURE_NAMES
    for name in catalogue.TABLE_NAMES:
        for fmt in catalogue.TABLE_FORMATS:
            assert (paths.TEMPLATES / "tables" / f"{name}.{fmt}.j2").is_file()
    assert [t["name"] for t in tasks.task_tables()] == list(catalogue.TABLE_NAMES)
    assert [t["name"] for t in tasks.task_figures()] == list(catalogue.FIGURE_NAMES)


def test_every_task_declares_deps_targets_and_doc() -> None:
    for fn in (tasks.task_tables, tasks.task_figures, tasks.task_manuscript, tasks.task_verify,
               tasks.task_manifest):
        assert fn.__doc__
        out = fn()
        subtasks = [out] if isinstance(out, dict) else list(out)
        for t in subtasks:
            assert t["file_dep"] and t["targets"]


def _deps(task: dict) -> set[str]:
    return set(task["file_dep"])


def test_code_deps_are_every_file_the_action_imports() -> None:
    """Editing any module an action runs makes its task out of date."""
    src = paths.ROOT / "artifact"
    analysis = _deps(task_analysis())
    assert {str(src / "records.py"), str(src / "stats.py"), str(src / "files.py"),
            str(src / "contract" / "summary.py")} <= analysis
    assert str(src / "render" / "model.py") not in analysis
    verify = _deps(tasks.task_verify())
    assert {str(src / "claims.py"), str(src / "files.py"), str(src / "render" / "report.py"),
            str(src / "render" / "text.py"), str(src / "contract" / "summary.py")} <= verify
    assert str(src / "render" / "figures.py") not in verify
    checks = [(task_analysis(), "artifact.analysis.summary"),
              (tasks.task_verify(), "artifact.render.report"),
              *((t, "artifact.render.tables") for t in tasks.task_tables()),
              *((t, "artifact.render.figures") for t in tasks.task_figures())]
    for task, module in checks:
        assert {str(p) for p in imports.closure(module)} <= _deps(task), module
    for t in tasks.task_manuscript():
        module = "artifact.render.vars" if t["name"] == "vars" else "artifact.render.manuscript"
        assert {str(p) for p in imports.closure(module)} <= _deps(t), t["name"]


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
