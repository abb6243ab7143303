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
