"""One error tree: every expected error is an ArtifactError, printed once as one line."""

from __future__ import annotations

import ast
import importlib
import inspect
from pathlib import Path

import pytest
from doit.exceptions import TaskFailed

from artifact import errors
from artifact.errors import ArtifactError, cli, doit_action

ROOT = Path(__file__).resolve().parents[1]
CLASSES = [getattr(errors, n) for n in errors.__all__ if inspect.isclass(getattr(errors, n))]
# Where each family is also importable from (the module named in the docstring's tree).
HOMES = {
    "SpecError": "artifact.spec",
    "PromptSetError": "artifact.workloads.prompts",
    "ToolchainError": "artifact.toolchain",
    "GGUFError": "artifact.gguf",
    "ServerError": "artifact.campaign.server",
    "RecordError": "artifact.records",
    "OutsideError": "artifact.records",
    "AnalysisError": "artifact.analysis.runs",
    "ConfigError": "artifact.analysis.runs",
    "MissingCellError": "artifact.analysis.accsplit",
    "RenderError": "artifact.render.model",
    "SummaryError": "artifact.render.model",
    "ManuscriptError": "artifact.render.manuscript",
    "ClaimsError": "artifact.claims",
    "ComparisonError": "artifact.render.comparison",
    "PlanError": "artifact.reproduce.plan",
    "RunSetError": "artifact.reproduce.runsets",
    "CalibrationError": "artifact.reproduce.calibrate",
    "StrictError": "artifact.reproduce.command",
}


def test_every_class_is_rooted_and_drawn() -> None:
    doc = errors.__doc__ or ""
    for cls in CLASSES:
        assert issubclass(cls, ArtifactError)
        assert cls.__name__ in doc, f"{cls.__name__} missing from the drawn tree"
        if cls is not ArtifactError:
            # no second root: a ValueError or RuntimeError catch must not swallow them
            assert not issubclass(cls, ValueError | RuntimeError), cls


@pytest.mark.parametrize(("name", "module"), sorted(HOMES.items()))
def test_families_are_the_same_objects_where_they_used_to_live(name: str, module: str) -> None:
    assert getattr(importlib.import_module(module), name) is getattr(errors, name)


def test_no_other_exception_classes_in_the_package() -> None:
    """A new family must join the tree in artifact/errors.py, not start its own root."""
    stray = []
    for path in sorted((ROOT / "artifact").rglob("*.py")):
        if path.name == "errors.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and any(
                isinstance(b, ast.Name) and b.id in {"Exception", "ValueError", "RuntimeError"}
                for b in node.bases
            ):
                stray.append(f"{path.relative_to(ROOT)}: {node.name}")
    assert stray == []


def test_library_code_does_not_print() -> None:
    """print() lives only in command lines (__main__, a main()) and artifact/log.py."""
    found = []
    for path in sorted((ROOT / "artifact").rglob("*.py")):
        if path.name in {"__main__.py", "log.py", "errors.py"}:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        mains = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == "main"]
        allowed = {id(n) for m in mains for n in ast.walk(m)}
        for node in ast.walk(tree):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                    and node.func.id == "print" and id(node) not in allowed):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert found == []


def test_cli_prints_one_line_and_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    @cli
    def main() -> int:
        raise errors.RecordError("metrics.json: cannot read JSON (Expecting value:\nline 1)")

    assert main() == 2
    err = capsys.readouterr().err
    assert err == "error: metrics.json: cannot read JSON (Expecting value: line 1)\n"


def test_cli_keeps_the_traceback_of_a_bug() -> None:
    @cli
    def main() -> int:
        raise KeyError("a bug")

    with pytest.raises(KeyError):
        main()


def test_doit_action_fails_the_task_with_one_line() -> None:
    def action(x: int) -> None:
        raise errors.SpecError(f"x.toml: run[{x}].k: expected a positive integer")

    out = doit_action(action)(3)
    assert isinstance(out, TaskFailed)
    assert out.message == "error: x.toml: run[3].k: expected a positive integer"
    assert inspect.signature(doit_action(action)) == inspect.signature(action)


@pytest.mark.parametrize("module", ["artifact.analysis.__main__", "artifact.campaign.__main__",
                                    "artifact.render.report", "artifact.reproduce.command"])
def test_command_lines_catch_artifact_errors_once(module: str) -> None:
    mod = importlib.import_module(module)
    assert getattr(mod.main, "__wrapped__", None) is not None, f"{module}: main not wrapped by cli"


def test_campaign_cli_one_line_for_a_missing_file(capsys: pytest.CaptureFixture[str],
                                                  tmp_path: Path) -> None:
    from artifact.campaign.__main__ import main

    assert main([str(tmp_path / "nope.toml"), "--list"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1


def test_analysis_cli_one_line_for_a_missing_runs_dir(capsys: pytest.CaptureFixture[str],
                                                      tmp_path: Path) -> None:
    from artifact.analysis.__main__ import main

    assert main(["--runs", str(tmp_path / "none"), "--out", str(tmp_path / "s.json")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1


def test_claims_cli_one_line_for_a_missing_summary(capsys: pytest.CaptureFixture[str],
                                                   tmp_path: Path) -> None:
    from artifact.render.report import main

    assert main(["--summary", str(tmp_path / "none.json")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1
