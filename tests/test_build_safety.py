"""The paper build never measures, survives a bad campaign file, runs one at a time, and never
leaves half a file; its manifest reaches the raw runs."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from doit.exceptions import TaskFailed
from doit.reporter import ConsoleReporter

from artifact import buildlock, files, paths, records
from artifact.render import tasks as rtasks

COPY = ("artifact", "templates", "experiments/campaigns", "experiments/runs")
FILES = ("dodo.py", "pyproject.toml", "experiments/claims.toml", "experiments/prompt_sets.toml")


def _copy(dest: Path) -> Path:
    for d in COPY:
        shutil.copytree(paths.ROOT / d, dest / d,
                        ignore=shutil.ignore_patterns("__pycache__", ".*", "_kick", "_superseded",
                                                      "_scratch*"))
    for f in FILES:
        shutil.copy2(paths.ROOT / f, dest / f)
    return dest


def _doit(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(root)}
    return subprocess.run([sys.executable, "-m", "doit", *args], cwd=root, env=env,
                          capture_output=True, text=True, check=False)


def _tasks() -> dict[str, dict[str, object]]:
    import dodo

    out: dict[str, dict[str, object]] = {}
    for name in dodo.__all__:
        made = getattr(dodo, name)()
        base = name.removeprefix("task_")
        for t in ([made] if isinstance(made, dict) else list(made)):
            out[f"{base}:{t['name']}" if "name" in t else base] = t
    return out


def test_no_paper_task_depends_on_a_campaign_target() -> None:
    tasks = _tasks()
    campaign = {k: t for k, t in tasks.items() if k.startswith(("campaign", "kick"))}
    assert campaign, "the study's campaign tasks should be listed"
    for t in campaign.values():
        assert not t.get("targets"), "a campaign target would let the paper build measure"
    targets = {str(p) for k, t in tasks.items() if not k.startswith(("campaign", "kick"))
               for p in t.get("targets", [])}  # type: ignore[attr-defined]
    deps = {str(p) for t in tasks.values() for p in t.get("file_dep", [])}  # type: ignore[attr-defined]
    raw = {str(p) for p in records.raw_run_files(paths.RUNS)}
    assert raw and raw <= deps  # the analysis reads the runs as they are ...
    assert not raw & targets  # ... and nothing builds them


def test_a_bad_campaign_file_is_one_failing_subtask(tmp_path: Path) -> None:
    import dodo

    bad = tmp_path / "c.toml"
    bad.write_text("[campaign\nname = 'x'\n")
    (task,) = list(dodo._campaign_tasks(bad, tmp_path / "runs"))
    assert task["name"] == "invalid-c" and "not valid TOML" in task["doc"]
    out = task["actions"][0]()
    assert isinstance(out, TaskFailed) and out.message.count("\n") == 0
    assert out.message.startswith("error: ") and "c.toml" in out.message


def test_a_typo_in_the_site_file_stops_only_the_campaigns_naming_the_file(tmp_path: Path
                                                                           ) -> None:
    """Issue 19: one unknown key in experiments/site.toml made every campaign file fail under
    the one name `campaign:invalid`, so doit refused every command (the paper build too) with
    an error naming no file. Each failing file is its own task, named after it."""
    root = _copy(tmp_path / "tree")
    site = root / "experiments" / "site.toml"
    site.write_text('[executor]\nkind = "local"\nbogus = 1\n', encoding="utf-8")
    listed = _doit(root, "list", "--all")
    assert listed.returncode == 0, listed.stdout + listed.stderr
    names = [line.split()[0] for line in listed.stdout.splitlines() if line.strip()]
    assert "campaign:invalid-cpu-study" in names and "campaign:invalid" not in names
    built = _doit(root, "analysis", "accsplit")  # the paper's first steps never read the site
    assert built.returncode == 0, built.stdout + built.stderr
    measured = _doit(root, "campaign")
    out = measured.stdout + measured.stderr
    assert measured.returncode != 0 and "Traceback" not in out
    assert "+ experiments/site.toml: executor.bogus: unknown key" in out, out


def test_two_invalid_campaign_files_are_two_tasks(tmp_path: Path) -> None:
    import dodo

    made = []
    for name in ("one", "two"):
        bad = tmp_path / f"{name}.toml"
        bad.write_text("[campaign\n")
        made += list(dodo._campaign_tasks(bad, tmp_path / "runs"))
    assert [t["name"] for t in made] == ["invalid-one", "invalid-two"]


def test_the_paper_build_in_a_copy_never_starts_a_campaign(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    (root / "experiments" / "campaigns" / "cpu-study.toml").write_text("[campaign\n")
    run = sorted(p for p in (root / "experiments" / "runs").iterdir() if p.is_dir())[0]
    (run / "metrics.json").unlink()
    listed = _doit(root, "list")
    assert listed.returncode == 0 and "campaign" in listed.stdout
    built = _doit(root, "analysis")
    assert built.returncode == 0, built.stderr
    assert "campaign" not in built.stdout.replace("doit campaign:", "")
    assert "Traceback" not in built.stderr
    summary = (root / "experiments" / "analysis" / "summary.json").read_text()
    assert f"run {run.name}: incomplete" in summary
    measured = _doit(root, "campaign")
    assert measured.returncode != 0 and "Traceback" not in measured.stdout + measured.stderr
    assert "cpu-study.toml: not valid TOML" in measured.stdout + measured.stderr


def test_a_second_build_waits_and_says_who_holds_the_lock(tmp_path: Path) -> None:
    lock = tmp_path / ".doit.lock"
    holder = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import sys, time
        from pathlib import Path
        from artifact import buildlock
        buildlock.hold(Path({str(lock)!r}), print)
        print("held", flush=True)
        time.sleep(30)
        """)], stdout=subprocess.PIPE, text=True, cwd=paths.ROOT)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        said: list[str] = []
        assert buildlock.hold(lock, said.append, timeout_s=0.5) is False
        assert said == [f"another build is running in this tree (pid {holder.pid}); waiting "
                        "for it to finish"]
    finally:
        holder.kill()  # kill -9: the kernel drops the lock, no stale lock is left
        holder.wait()
        if holder.stdout is not None:
            holder.stdout.close()
    assert buildlock.hold(lock, said.append, timeout_s=5) is True


def test_an_output_is_replaced_whole_or_not_at_all(tmp_path: Path) -> None:
    out = tmp_path / "paper.pdf"
    out.write_bytes(b"old")
    with pytest.raises(RuntimeError), files.output(out) as tmp:
        tmp.write_bytes(b"half")
        raise RuntimeError("the engine died")
    assert out.read_bytes() == b"old" and [p.name for p in tmp_path.iterdir()] == ["paper.pdf"]
    with files.output(out) as tmp:
        tmp.write_bytes(b"new")
    assert out.read_bytes() == b"new"


def test_the_manifest_covers_the_raw_runs() -> None:
    listed = {p.relative_to(paths.ROOT).as_posix() for p in rtasks.manifest_inputs()}
    raw = [p for p in (paths.RUNS).glob("*/*") if p.name in records.RUN_FILES
           and not p.parent.name.startswith("_")]
    assert raw and all(p.relative_to(paths.ROOT).as_posix() in listed for p in raw)


def _tiny_doit(root: Path, dodo: str, *args: str) -> subprocess.Popen[bytes]:
    (root / "dodo.py").write_text(textwrap.dedent(dodo), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(paths.ROOT)}
    return subprocess.Popen([sys.executable, "-m", "doit", *args], cwd=root, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """End what the test started: the process and its group (doit's workers)."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    for stream in (proc.stdout, proc.stderr):
        if stream is not None:
            stream.close()


def test_doit_into_a_closed_pipe_exits_and_frees_the_lock(tmp_path: Path) -> None:
    """Issue 46: `doit | head` left doit waiting for ever on the workers it had started when
    the reader went away, holding the build lock; the next doit waited for it for ever. With
    the project's reporter it exits at once (status 141, as `make | head`) and frees the lock."""
    import dodo

    reporter = dodo.DOIT_CONFIG.get("reporter", ConsoleReporter)
    proc = _tiny_doit(tmp_path, f"""
        import time
        from pathlib import Path
        from artifact import buildlock
        from {reporter.__module__} import {reporter.__name__} as Reporter
        DOIT_CONFIG = {{"num_process": 2, "par_type": "process", "verbosity": 2,
                       "reporter": Reporter}}
        buildlock.hold(Path(__file__).parent / ".doit.lock", print)

        def task_a_long():
            '''a worker busy for a while'''
            return {{"actions": ["sleep 20"], "uptodate": [False]}}

        def task_b_skipped():
            '''many up-to-date tasks, reported while the workers start'''
            for i in range(3000):
                yield {{"name": f"{{i:04d}}-" + "x" * 40, "actions": ["true"],
                       "uptodate": [lambda: time.sleep(0.001) or True]}}
        """)
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline()  # `| head -1`: one line read, then the reader is gone
        proc.stdout.close()
        try:
            code = proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            pytest.fail("doit kept running after its reader went away")
        assert proc.stderr is not None
        err = proc.stderr.read().decode()
        assert code == 128 + signal.SIGPIPE and "Traceback" not in err, err
        said: list[str] = []
        assert buildlock.hold(tmp_path / ".doit.lock", said.append, timeout_s=5), said
    finally:
        _stop(proc)


def test_a_forked_child_does_not_keep_the_lock(tmp_path: Path) -> None:
    """doit's workers are forked after the lock is taken; one outliving doit (blocked on its
    queue) kept the tree locked. A forked child closes its copy of the lock at once."""
    lock = tmp_path / ".doit.lock"
    holder = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import os, time
        from pathlib import Path
        from artifact import buildlock
        buildlock.hold(Path({str(lock)!r}), print)
        if os.fork() == 0:
            time.sleep(30)  # a worker that lingers
            os._exit(0)
        print("held", flush=True)
        os._exit(0)  # the build exits; its child lives on
        """)], stdout=subprocess.PIPE, cwd=paths.ROOT, start_new_session=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == b"held"
        holder.wait(timeout=10)
        said: list[str] = []
        assert buildlock.hold(lock, said.append, timeout_s=3) is True, said
    finally:
        _stop(holder)


def test_the_realism_analysis_reads_no_site_file(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 46: a misspelt key in the uncommitted experiments/site.toml stopped the paper
    build, because the realism analysis loaded its campaign with the executor settings. The
    build never measures: the campaign's margins and plan come from the committed TOML alone."""
    from artifact.analysis import realism

    site = tmp_path / "site.toml"
    site.write_text('[executor]\nkind = "local"\nbogus = 1\n', encoding="utf-8")
    monkeypatch.setenv("SPECDEC_SITE", str(site))
    margins, _ = realism.margins_of(paths.REALISM_CAMPAIGN)
    assert margins
