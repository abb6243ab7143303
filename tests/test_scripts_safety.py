"""scripts/venv.sh deletes and writes into only what it made, and installs only with the venv's
own interpreter; scripts/sysdeps.sh reads SPECDEC_NO_APT as people spell it. Each case sources
the script with bash (under `set -euo pipefail`, as scripts/test does) in a temporary folder,
with fake interpreters and a fake apt-get that record their calls: nothing real is installed,
and the project's own .venv is never touched."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"
BASH = shutil.which("bash") or "/bin/bash"
TRUE = shutil.which("true") or "/bin/true"


def _exe(path: Path, body: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return path


def _source(script: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([BASH, "-c", 'set -euo pipefail; . "$1"; echo sourced', "_",
                           str(SCRIPTS / script)],
                          cwd=cwd, env=env, capture_output=True, text=True, timeout=30, check=False)


def _one_line(proc: subprocess.CompletedProcess[str], *needles: str) -> str:
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    for n in needles:
        assert n in lines[0], lines[0]
    return lines[0]


def _tree(p: Path) -> object:
    """Everything about p that a run could change: kind, bytes, mode, links, contents."""
    if p.is_symlink():
        return ("link", os.readlink(p))
    if p.is_file():
        return ("file", p.read_bytes(), p.stat().st_mode)
    if p.is_dir():
        return ("dir", p.stat().st_mode, sorted((c.name, _tree(c)) for c in p.iterdir()))
    return None


# --- scripts/venv.sh -----------------------------------------------------------------------------

class Venv:
    """A tmp working folder (with the lock and pyproject.toml the script hashes), a PATH whose
    `python` and `python3` only record being called, and fake interpreters for SPECDEC_PYTHON."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.logs = tmp / "logs"
        self.logs.mkdir()
        self.work = tmp / "work"
        self.work.mkdir()
        (self.work / "requirements.lock").write_text("x==1 --hash=sha256:00\n")
        (self.work / "pyproject.toml").write_text("[project]\nname = 'x'\n")
        pathbin = tmp / "pathbin"
        for name in ("python", "python3"):
            _exe(pathbin / name, f'echo "$*" >> {self.logs}/path-{name}\necho 3.11.9\n')
        # the interpreter a (fake) venv gets: answers -c with a version, records every call
        self.venv_python = _exe(tmp / "venv-python",
                                f'echo "$*" >> {self.logs}/venv-python\n'
                                'case "$1" in -c) echo 3.11.9 ;; esac\n')
        self.env = {"PATH": f"{pathbin}:{os.environ['PATH']}", "HOME": str(tmp)}

    def python(self, venv: str) -> str:
        """A SPECDEC_PYTHON that passes the version check and whose `-m venv DIR` does `venv`:
        fail (after writing part of DIR), mkdir (exit 0, no interpreter) or ok (a fake venv)."""
        make = {
            "fail": 'mkdir -p "$3/bin" && : > "$3/bin/partial"; exit 1',
            "mkdir": 'mkdir -p "$3"; exit 0',
            "ok": (f'mkdir -p "$3/bin" && echo "home = /x" > "$3/pyvenv.cfg" && '
                   f'cp {self.venv_python} "$3/bin/python"; exit 0'),
        }[venv]
        return str(_exe(self.tmp / f"py-{venv}",
                        f'echo "$*" >> {self.logs}/specdec-python\n'
                        'case "$1" in\n  -c) exit 0 ;;\n  --version) echo "Python 3.11.9" ;;\n'
                        f'  -m) {make} ;;\nesac\n'))

    def run(self, target: Path, python: str) -> subprocess.CompletedProcess[str]:
        return _source("venv.sh", self.work,
                       {**self.env, "SPECDEC_VENV": str(target), "SPECDEC_PYTHON": python})

    def calls(self, name: str) -> str:
        log = self.logs / name
        return log.read_text() if log.exists() else ""


@pytest.fixture
def venv(tmp_path: Path) -> Venv:
    return Venv(tmp_path)


def _make_not_a_venv(kind: str, target: Path, v: Venv) -> None:
    if kind == "file":
        target.write_bytes(b"precious\x00bytes\n")
    elif kind == "folder":
        target.mkdir()
        (target / "sentinel").write_text("keep me")
    elif kind == "empty folder":
        target.mkdir()
    elif kind == "folder with bin/python, no pyvenv.cfg":  # say, SPECDEC_VENV=/usr
        (target / "bin").mkdir(parents=True)
        shutil.copy2(v.venv_python, target / "bin" / "python")
        (target / "sentinel").write_text("keep me")
    elif kind == "dangling link":
        target.symlink_to(v.tmp / "nowhere")
    else:  # pragma: no cover
        raise AssertionError(kind)


@pytest.mark.parametrize("kind", ["file", "folder", "empty folder",
                                  "folder with bin/python, no pyvenv.cfg", "dangling link"])
def test_a_target_that_is_not_a_venv_is_refused_and_left_as_it_is(venv: Venv, kind: str) -> None:
    target = venv.tmp / "target"
    _make_not_a_venv(kind, target, venv)
    before = _tree(target)
    proc = venv.run(target, venv.python("fail"))
    assert _tree(target) == before  # neither deleted nor written into
    assert "-m venv" not in venv.calls("specdec-python")
    assert not venv.calls("venv-python") and not venv.calls("path-python")
    assert proc.returncode != 0 and "sourced" not in proc.stdout
    _one_line(proc, f"SPECDEC_VENV={target}", "not a virtual environment", "pyvenv.cfg")


def test_a_failing_venv_removes_the_folder_it_created_and_nothing_else(venv: Venv) -> None:
    parent = venv.tmp / "envs"
    parent.mkdir()
    (parent / "sentinel").write_text("keep me")
    target = parent / "new" / "venv"  # `-m venv` makes the parents too; only the venv goes
    proc = venv.run(target, venv.python("fail"))
    assert f"-m venv {target}" in venv.calls("specdec-python")
    assert not target.exists() and (parent / "new").is_dir()
    assert (parent / "sentinel").read_text() == "keep me"
    assert not venv.calls("path-python")
    assert proc.returncode != 0 and "sourced" not in proc.stdout
    _one_line(proc, "-m venv' failed", f"SPECDEC_VENV={target}", "python3-venv")


def test_a_failing_venv_leaves_a_venv_that_was_there(venv: Venv) -> None:
    # a venv whose interpreter no longer runs is made again in place; when that fails, it stays
    target = venv.tmp / "old-venv"
    (target / "bin").mkdir(parents=True)
    (target / "pyvenv.cfg").write_text("home = /gone\n")
    (target / "bin" / "python").write_text("not runnable")
    (target / "sentinel").write_text("keep me")
    proc = venv.run(target, venv.python("fail"))
    assert f"-m venv {target}" in venv.calls("specdec-python")
    assert (target / "sentinel").exists(), "a venv that was there was deleted"
    assert (target / "sentinel").read_text() == "keep me"
    assert (target / "pyvenv.cfg").read_text() == "home = /gone\n"
    assert not venv.calls("path-python")
    assert proc.returncode != 0
    _one_line(proc, "-m venv' failed", str(target))


@pytest.mark.parametrize("python", ["/bin/true", "mkdir"])
def test_a_python_that_makes_no_venv_stops_before_any_pip(venv: Venv, python: str) -> None:
    # /bin/true "passes" the version check and "succeeds" at -m venv without making anything;
    # the other makes the folder and no interpreter
    target = venv.tmp / "v"
    py = TRUE if python == "/bin/true" else venv.python(python)
    proc = venv.run(target, py)
    assert not venv.calls("path-python") and not venv.calls("path-python3")  # no pip, anywhere
    assert not target.exists()  # what this run made is gone
    assert proc.returncode != 0 and "sourced" not in proc.stdout
    _one_line(proc, f"{target}/bin/python", f"SPECDEC_VENV={target}", "SPECDEC_PYTHON")


def test_a_made_venv_installs_with_its_own_interpreter_once(venv: Venv) -> None:
    target = venv.tmp / "v"
    py = venv.python("ok")
    proc = venv.run(target, py)
    assert proc.returncode == 0 and "sourced" in proc.stdout, proc.stderr
    pip = [c for c in venv.calls("venv-python").splitlines() if c.startswith("-m pip install")]
    assert len(pip) == 2
    assert "--require-hashes -r requirements.lock" in pip[0]
    assert "--no-deps --no-build-isolation -e ." in pip[1]
    assert (target / ".specdec-installed").read_text().strip().endswith("-3.11.9")
    assert not venv.calls("path-python") and not venv.calls("path-python3")
    # a second run finds the venv and the stamp: no new venv, no pip
    made = venv.calls("specdec-python")
    proc = venv.run(target, py)
    assert proc.returncode == 0 and "sourced" in proc.stdout, proc.stderr
    assert venv.calls("specdec-python") == made
    assert len([c for c in venv.calls("venv-python").splitlines() if "-m pip" in c]) == 2


# --- scripts/sysdeps.sh --------------------------------------------------------------------------

def _sysdeps(tmp: Path, no_apt: str | None, *, uid: int = 0,
             tools: bool = False) -> tuple[subprocess.CompletedProcess[str], str]:
    """sysdeps.sh with a PATH of bash, an `id` saying uid, a recording apt-get and, with tools,
    cmake, make and g++; returns the run and apt-get's calls."""
    bin_ = tmp / "bin"
    bin_.mkdir(exist_ok=True)
    (bin_ / "bash").symlink_to(BASH)
    _exe(bin_ / "id", f"echo {uid}\n")
    log = tmp / "apt-get.log"
    _exe(bin_ / "apt-get", f'echo "$*" >> {log}\n')
    if tools:
        for t in ("cmake", "make", "g++"):
            _exe(bin_ / t, "exit 0\n")
    env = {"PATH": str(bin_), "HOME": str(tmp)}
    if no_apt is not None:
        env["SPECDEC_NO_APT"] = no_apt
    proc = _source("sysdeps.sh", tmp, env)
    return proc, log.read_text() if log.exists() else ""


@pytest.mark.parametrize("value", ["1", "yes", "YES", "true", "True", "on", "On"])
def test_no_apt_true_never_runs_apt_get(tmp_path: Path, value: str) -> None:
    proc, apt = _sysdeps(tmp_path, value)
    assert not apt, f"SPECDEC_NO_APT={value} ran apt-get {apt}"
    assert proc.returncode != 0
    _one_line(proc, f"SPECDEC_NO_APT={value}: not installing cmake make g++ with apt-get")


@pytest.mark.parametrize("value", [None, "", "0", "no", "false", "False", "off", "OFF"])
def test_no_apt_false_installs_as_root(tmp_path: Path, value: str | None) -> None:
    proc, apt = _sysdeps(tmp_path, value)
    assert proc.returncode == 0 and "sourced" in proc.stdout, proc.stderr
    assert "install -y -qq --no-install-recommends cmake make g++" in apt


def test_without_root_the_packages_are_named_not_installed(tmp_path: Path) -> None:
    proc, apt = _sysdeps(tmp_path, None, uid=1000)
    assert proc.returncode != 0 and not apt
    _one_line(proc, "needs cmake make g++", "apt-get install cmake make g++")


@pytest.mark.parametrize("tools", [False, True], ids=["missing", "present"])
@pytest.mark.parametrize("value", ["maybe", "2", "yes please", "y"])
def test_no_apt_with_another_value_stops_with_one_line(tmp_path: Path, value: str,
                                                       tools: bool) -> None:
    proc, apt = _sysdeps(tmp_path, value, tools=tools)
    assert not apt, f"SPECDEC_NO_APT={value} ran apt-get {apt}"
    assert proc.returncode != 0 and "sourced" not in proc.stdout
    line = _one_line(proc, "SPECDEC_NO_APT=", "1, true, yes or on", "0, false, no, off or empty")
    assert value.split()[0] in line
