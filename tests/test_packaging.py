"""Packaging: one hash-locked lock used everywhere, .dockerignore in step with .gitignore, a
Debian-12-pinned Dockerfile, and a CITATION.cff that validates and names this version."""

from __future__ import annotations

import re
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from artifact import paths

ROOT = paths.ROOT
LOCK = ROOT / "requirements.lock"
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def _lock() -> dict[str, tuple[str, list[str]]]:
    """name -> (version, hashes) of requirements.lock."""
    entries: dict[str, tuple[str, list[str]]] = {}
    text = LOCK.read_text(encoding="utf-8").replace("\\\n", " ")
    for line in text.splitlines():
        if not line[:1].isalnum():
            continue
        m = re.match(r"([A-Za-z0-9_.\-]+)==(\S+)", line)
        assert m, f"requirements.lock: not pinned with ==: {line[:60]}"
        hashes = re.findall(r"--hash=sha256:(\w+)", line)
        entries[canonicalize_name(m.group(1))] = (m.group(2), hashes)
    return entries


def _declared() -> list[Requirement]:
    proj = PYPROJECT["project"]
    reqs = [*proj["dependencies"], *PYPROJECT["build-system"]["requires"]]
    for extra in proj.get("optional-dependencies", {}).values():
        reqs.extend(extra)
    return [Requirement(r) for r in reqs]


def test_lock_pins_every_package_with_hashes() -> None:
    lock = _lock()
    assert len(lock) > 30
    for name, (_, hashes) in lock.items():
        assert hashes and all(len(h) == 64 for h in hashes), f"requirements.lock: {name}: no sha256"


def test_lock_covers_pyproject() -> None:
    lock = _lock()
    for req in _declared():
        name = canonicalize_name(req.name)
        assert name in lock, (f"pyproject.toml requires {req}, missing from requirements.lock: "
                              "run `bash scripts/lock`")
        version = lock[name][0]
        assert req.specifier.contains(version, prereleases=True), (
            f"requirements.lock pins {name}=={version}, pyproject.toml asks {req.specifier}: "
            "run `bash scripts/lock`")


@pytest.mark.parametrize("path", ["scripts/build", "scripts/test"])
def test_the_two_commands_install_into_the_projects_own_venv(path: str) -> None:
    text = (ROOT / path).read_text(encoding="utf-8")
    assert ". scripts/venv.sh" in text
    assert "pip install" not in text  # only through the venv, never into the global Python


@pytest.mark.parametrize("path", ["scripts/venv.sh", "Dockerfile"])
def test_everything_installs_the_lock_with_hashes(path: str) -> None:
    text = (ROOT / path).read_text(encoding="utf-8")
    assert "--require-hashes -r requirements.lock" in text
    # the package itself adds nothing unhashed: no dependency resolution, no build isolation
    assert "--no-deps --no-build-isolation -e ." in text
    assert "constraints.txt" not in text


def _gitignore_as_dockerignore(pattern: str) -> str:
    p = pattern.rstrip("/")
    return p if "/" in p else f"**/{p}"


def test_dockerignore_mirrors_gitignore() -> None:
    ignore = [ln.strip() for ln in (ROOT / ".gitignore").read_text().splitlines()
              if ln.strip() and not ln.startswith("#")]
    docker = {ln.strip() for ln in (ROOT / ".dockerignore").read_text().splitlines()
              if ln.strip() and not ln.startswith("#")}
    expected = {_gitignore_as_dockerignore(p) for p in ignore} | {".git"}
    assert docker == expected


def test_no_committed_file_is_ignored() -> None:
    """A file committed past .gitignore (git add -f) is in a clean clone but not in the image's
    build context (.dockerignore mirrors .gitignore): the image then builds other bytes."""
    git = shutil.which("git")
    if git is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    proc = subprocess.run([git, "ls-files", "-ci", "--exclude-standard"], cwd=ROOT,
                          capture_output=True, text=True, check=True)
    ignored = proc.stdout.split()
    assert not ignored, (f"{len(ignored)} committed file(s) match .gitignore, so the image's "
                         f"build context leaves them out; first: {ignored[0]}")


def test_dockerfile_base_is_debian_12() -> None:
    text = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    base = re.search(r"^ARG BASE=(\S+)$", text, re.M)
    assert base and base.group(1).endswith("-bookworm"), "the base must pin Debian 12 (bookworm)"
    assert text.count("FROM ${BASE}") == 2  # the toolchain stage and the image
    assert re.search(r'^CMD \["doit"\]$', text, re.M)


def _cff() -> str:
    return (ROOT / "CITATION.cff").read_text(encoding="utf-8")


def test_citation_version_is_the_package_version() -> None:
    m = re.search(r"^version: (\S+)$", _cff(), re.M)
    assert m and m.group(1).strip("\"'") == PYPROJECT["project"]["version"]


def test_preferred_citation_is_the_paper() -> None:
    title = re.search(r'^title: "(.*)"$', (paths.MANUSCRIPT / "paper.md").read_text(), re.M)
    pref = _cff().split("\npreferred-citation:\n", 1)
    assert title and len(pref) == 2, "CITATION.cff: no preferred-citation"
    assert f'title: "{title.group(1)}"' in pref[1]


def _cffconvert() -> str:
    exe = shutil.which("cffconvert")
    assert exe, "cffconvert (dev lock) is not installed"
    return exe


def test_citation_validates_against_the_cff_schema() -> None:
    proc = subprocess.run([_cffconvert(), "--validate", "-i", str(ROOT / "CITATION.cff")],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_an_invalid_citation_fails_validation(tmp_path: Path) -> None:
    bad = tmp_path / "CITATION.cff"
    bad.write_text(_cff().replace("cff-version: 1.2.0", "cff-version: 1.2.0\nyear-of-birth: 1"))
    proc = subprocess.run([_cffconvert(), "--validate", "-i", str(bad)],
                          capture_output=True, text=True, check=False)
    assert proc.returncode != 0


def test_toolchain_info_prints_every_pin() -> None:
    from artifact import toolchain

    out = toolchain.info()
    for pin in (toolchain.LLAMA_CPP_VERSION, toolchain.SDIST_SHA256, toolchain.MODEL_WHEEL_VERSION,
                toolchain.MODEL_WHEEL_SHA256, toolchain.MODEL_SHA256, *toolchain.CMAKE_FLAGS):
        assert pin in out
    assert f"requirements.lock: {len(_lock())} pinned with sha256" in out


def test_toolchain_export_is_a_cache_the_image_can_use(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from artifact import toolchain

    monkeypatch.setenv("SPECDEC_CACHE", str(tmp_path / "cache"))
    with pytest.raises(toolchain.ToolchainError, match="nothing to export"):
        toolchain.export(tmp_path / "out")
    built = tmp_path / "built"
    built.mkdir()
    for t in toolchain.TARGETS:
        (built / t).write_bytes(t.encode())
    toolchain.install_built(built, log=lambda _: None)
    toolchain.model_path().parent.mkdir(parents=True)
    toolchain.model_path().write_bytes(b"gguf")
    toolchain.export(tmp_path / "out")
    monkeypatch.setenv("SPECDEC_CACHE", str(tmp_path / "out"))
    assert toolchain.llama_is_built() and toolchain.model_path().read_bytes() == b"gguf"


def test_toolchain_runs_on_the_standard_library_alone() -> None:
    # the Dockerfile's build stage runs `python -m artifact.toolchain` before any package is
    # installed: -S leaves site-packages out, as that stage has them
    import sys

    proc = subprocess.run([sys.executable, "-S", "-m", "artifact.toolchain", "--help"],
                          cwd=ROOT, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
