"""The package's layering, read from its imports (function-local ones included)."""

from __future__ import annotations

from artifact import imports

MODULES = imports.modules()


def test_no_import_cycle() -> None:
    state: dict[str, int] = {}

    def visit(m: str, trail: list[str]) -> None:
        state[m] = 1
        for d in sorted(imports.imports(m)):
            assert state.get(d) != 1, "import cycle: " + " -> ".join([*trail, m, d])
            if d not in state:
                visit(d, [*trail, m])
        state[m] = 2

    for m in sorted(MODULES):
        if m not in state:
            visit(m, [])


def test_the_ground_floor_imports_nothing_of_ours() -> None:
    for m in ("artifact.paths", "artifact.imports", "artifact.errors", "artifact.log"):
        assert imports.imports(m) == set(), m
    assert imports.imports("artifact.files") == {"artifact.errors"}
    assert imports.imports("artifact.contract") == {"artifact.errors"}
    assert imports.imports("artifact.contract.summary") == {"artifact.contract",
                                                            "artifact.errors", "artifact.files"}


def test_claims_is_a_ledger_below_render() -> None:
    assert imports.imports("artifact.claims") <= {"artifact", "artifact.files", "artifact.paths",
                                                  "artifact.errors", "artifact.contract.summary"}


def test_analysis_and_render_meet_only_in_the_files() -> None:
    for m in MODULES:
        if m.startswith("artifact.analysis"):
            assert not any(d.startswith("artifact.render") for d in imports.imports(m)), m
        if m.startswith("artifact.render"):
            assert not any(d.startswith("artifact.analysis") for d in imports.imports(m)), m


def test_the_catalogue_stays_light() -> None:
    assert imports.imports("artifact.render.catalogue") == {"artifact.paths"}


def test_the_ledger_loads_no_renderer_even_as_a_command() -> None:
    """No circle through a dynamic import either: `python -m artifact.verify` sits above both."""
    src = MODULES["artifact.claims"].read_text(encoding="utf-8")
    assert "import_module" not in src and "__import__" not in src
    assert imports.imports("artifact.verify") == {"artifact.render.report"}


def test_the_campaign_reaches_planning_only_through_its_interface() -> None:
    """The campaign executes plans: of the planning package it imports only the package's face
    (``from artifact.workloads import ...``), never a planning module."""
    for m in MODULES:
        if m.startswith("artifact.campaign"):
            planning = {d for d in imports.imports(m) if d.startswith("artifact.workloads")}
            assert planning <= {"artifact.workloads"}, (m, planning)


def test_planning_sits_below_the_campaign_the_analysis_and_the_renderer() -> None:
    above = ("artifact.campaign", "artifact.executors", "artifact.analysis", "artifact.render",
             "artifact.reproduce")
    for m in MODULES:
        if m.startswith("artifact.workloads"):
            assert not any(d.startswith(above) for d in imports.imports(m)), m


def test_executors_sit_beside_the_runner_not_inside_it() -> None:
    """Executors use the campaign; of the campaign only its command (``python -m
    artifact.campaign``, at the edge) chooses among them."""
    for m in MODULES:
        if m.startswith("artifact.campaign") and m != "artifact.campaign.__main__":
            assert not any(d.startswith("artifact.executors") for d in imports.imports(m)), m
        if m.startswith("artifact.executors"):
            assert not any(d.startswith(("artifact.analysis", "artifact.render",
                                         "artifact.reproduce")) for d in imports.imports(m)), m
