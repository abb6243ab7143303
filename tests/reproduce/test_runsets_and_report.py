"""Two real run sets compared like with like, and the side-by-side report made from them.

B is sliced from committed runs (three runs, the first prompt of each domain, decoding rates
scaled as if on a faster machine); A is the committed runs themselves.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import matplotlib.pyplot as plt
import pytest

from artifact import claims, paths
from artifact.render import comparison
from artifact.reproduce import command, document, runsets

RUNS = ("final-none", "final-ngram-mod", "final-draft-self")


def slice_runs(dest: Path, *, speed: float, cpu: str,
               host: dict[str, object] | None = None) -> list[str]:
    ids: list[str] = []
    for rid in RUNS:
        src, dst = paths.RUNS / rid, dest / rid
        shutil.copytree(src, dst)
        rows = [json.loads(line) for line in (dst / "results.jsonl").read_text().splitlines()]
        if not ids:
            seen: set[str] = set()
            ids = [r["prompt_id"] for r in rows
                   if r["domain"] not in seen and not seen.add(r["domain"])]  # type: ignore[func-returns-value]
        config = json.loads((dst / "config.json").read_text())
        config["prompt_ids"] = sorted(ids)
        config["environment"]["cpu_model"] = cpu
        if host is not None:
            config["environment"]["host"] = host
        (dst / "config.json").write_text(json.dumps(config))
        keep = [r for r in rows if r["prompt_id"] in ids]
        for r in keep:
            r["timings"]["predicted_per_second"] *= speed
        (dst / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in keep))
        (dst / "server.log").unlink()  # a log of the whole run would not pair with the slice
    return ids


@pytest.fixture(scope="module")
def sliced(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    root = tmp_path_factory.mktemp("b")
    return root, slice_runs(root, speed=1.7, cpu="AMD EPYC 7B13")


def test_the_reference_is_cut_to_the_reproductions_runs_and_prompts(
        sliced: tuple[Path, list[str]]) -> None:
    root, ids = sliced
    a, b = runsets.pair_of(paths.RUNS, root)
    assert a.run_ids == b.run_ids == tuple(sorted(RUNS))
    assert len(a.all_run_ids) > len(RUNS)  # the reference had more, for "not run"
    for ra in a.runs:
        assert sorted(r.prompt_id for r in ra.records) == sorted(ids)
    # the committed self-draft run keeps its per-position log entries after the cut
    self_draft = next(r for r in a.runs if r.desc.run_id == "final-draft-self")
    assert self_draft.log is not None and len(self_draft.log) == len(ids)
    assert a.hardware != b.hardware and dict(a.software) == dict(b.software)
    for ra, rb in zip(a.runs, b.runs, strict=True):
        assert runsets.same_outputs(ra, rb) == (len(ids), len(ids))
        sa, sb = runsets.raw_stats(ra), runsets.raw_stats(rb)
        assert sb["tok_per_s_mean"] == pytest.approx(1.7 * sa["tok_per_s_mean"])
        assert sa["n"] == sb["n"] == len(ids)


def test_compare_writes_the_report_and_leaves_both_sets_untouched(
        sliced: tuple[Path, list[str]], tmp_path: Path) -> None:
    root, _ = sliced

    def digest(folder: Path) -> dict[str, bytes]:
        return {p.relative_to(folder).as_posix(): p.read_bytes()
                for p in sorted(folder.rglob("*")) if p.is_file()}

    before = digest(paths.RUNS), digest(root)
    lines: list[str] = []
    doc = command.compare_sets(paths.RUNS, root, out=tmp_path, say=lines.append)
    assert (digest(paths.RUNS), digest(root)) == before
    verdicts = {c["id"]: c["verdict"] for c in doc["claims"]}
    assert verdicts["baseline-tok-s"] == "differs with hardware"  # 1.7x on other hardware
    assert verdicts["draft-self-alpha"] == "reproduced"
    assert verdicts["self-draft-accepts-nearly-all"] == "holds"
    assert verdicts["draft-q2k-alpha"] == "not run" and verdicts["records"] == "not run"
    assert doc["strict_failures"] == [] and not doc["same_hardware"]
    assert [r["same_outputs"] for r in doc["runs"]] == [[3, 3]] * 3
    md = (tmp_path / comparison.MD).read_text()
    assert "| baseline-tok-s | hardware-bound | 52.2 |" in md  # the paper's value beside A, B
    assert "AMD EPYC 7B13, 2 cores, no GPU" in md and "3 of 3" in md
    assert (tmp_path / comparison.HTML).read_text().count("data:image/png;base64") == 1
    # the first study's speedups are points (no interval): equal points show no equivalence
    assert verdicts["draft-self-speedup"] == "cannot tell (no interval)"
    assert any(line.startswith("1 reproduced, 2 holds, 1 differs with hardware") for line in lines)
    # strict: on other hardware the speed difference is no failure ...
    command.compare_sets(paths.RUNS, root, out=tmp_path, strict=True, say=lines.append)


HOST = {"cpu_vendor": "GenuineIntel", "cpu_family": "6", "cpu_model_id": "143",
        "cpu_stepping": "8", "microcode": "0x2b000603", "cpu_flags": "bf17f8520e47",
        "cpu_mhz": 2100, "cache_l1d": "48 KiB", "cache_l1i": "32 KiB", "cache_l2": "2 MiB",
        "cache_l3": "105 MiB", "threads_per_core": "1", "hypervisor": "KVM",
        "mem_total_mib": 7851, "kernel": "6.8.0"}


def _reproduction(folder: Path, *, speed: float, scale: float, host: dict[str, object]) -> Path:
    """A reproduction folder: sliced runs and a manifest whose calibration says ``scale``."""
    slice_runs(folder / "runs", speed=speed, cpu="Intel(R) Xeon(R) Processor", host=host)
    manifest = {"selection": {"label": "subset", "runs": list(RUNS), "prompts_per_domain": 1},
                "campaign": "cpu-study",
                "started": None, "finished": None, "complete": True,
                "calibration": {"run_id": "final-none", "prompt_ids": ["a"], "here_ms": scale,
                                "committed_ms": 1.0, "scale": scale},
                "expected_s": {}, "runs": {}, "load": [], "cpu_count": 2}
    (folder / "reproduction.json").write_text(json.dumps(manifest))
    return folder


def test_strict_fails_the_same_difference_only_on_hardware_shown_the_same(
        tmp_path: Path) -> None:
    """Issue 34: "failed on the same hardware" only when it was: equal extended fingerprints and
    a calibrated speed ratio within the noise band. Otherwise the 1.7x faster rate differs with
    hardware, and the report names the ratio."""
    slice_runs(tmp_path / "a", speed=1.0, cpu="Intel(R) Xeon(R) Processor", host=HOST)
    quiet = lambda _: None  # noqa: E731
    same = _reproduction(tmp_path / "same", speed=1.7, scale=1.03, host=HOST)
    with pytest.raises(command.ReproduceError, match="baseline-tok-s"):
        command.compare_sets(tmp_path / "a", same, out=tmp_path / "o1", strict=True, say=quiet)
    faster = _reproduction(tmp_path / "faster", speed=1.7, scale=0.58, host=HOST)
    doc = command.compare_sets(tmp_path / "a", faster, out=tmp_path / "o2", strict=True,
                               say=quiet)
    tps = next(c for c in doc["claims"] if c["id"] == "baseline-tok-s")
    assert doc["hardware"]["verdict"] == "different" and not doc["same_hardware"]
    assert tps["verdict"] == "differs with hardware" and "speed ratio 0.58" in tps["why"]
    bigger = _reproduction(tmp_path / "cache", speed=1.7, scale=1.0,
                           host={**HOST, "cache_l3": "480 MiB"})
    doc = command.compare_sets(tmp_path / "a", bigger, out=tmp_path / "o3", strict=True,
                               say=quiet)
    assert doc["hardware"]["differing"] == ["cache_l3"]
    assert {c["id"]: c["verdict"] for c in doc["claims"]}["baseline-tok-s"] == \
        "differs with hardware"
    md = (tmp_path / "o3" / comparison.MD).read_text()
    assert "| cache\\_l3 | 105 MiB | 480 MiB |" in md


def test_the_committed_runs_recorded_no_extended_fingerprint_so_nothing_is_same_to_them(
        tmp_path: Path) -> None:
    """Runs measured before issue 34 keep what they have and compare as "unknown"."""
    repro = _reproduction(tmp_path / "b", speed=1.7, scale=1.0, host=HOST)
    doc = command.compare_sets(paths.RUNS, repro, out=tmp_path / "out", strict=True,
                               say=lambda _: None)
    assert doc["hardware"]["verdict"] == "unknown"
    assert "no extended fingerprint" in doc["hardware"]["why"]


def test_the_figure_draws_bands_and_bounds(sliced: tuple[Path, list[str]],
                                           tmp_path: Path) -> None:
    root, _ = sliced
    doc = document.build(*runsets.pair_of(paths.RUNS, root), claims.load(paths.CLAIMS),
                         ledger_path=paths.CLAIMS)
    fig, panels = comparison.figure(doc)
    plt.close(fig)
    by_id = {p.claim: p for p in panels}
    tps = by_id["baseline-tok-s"]
    assert tps.band is not None and tps.band[0] < tps.a[0] < tps.band[1] < tps.b[0]
    q = by_id["draft-model-delays-first-token"]  # bound is another quantity, per side
    assert q.bounds and q.bounds[0][0] == "gt" and q.b[0] > q.bounds[0][2]
    assert by_id["records"].verdict == "not run" and by_id["records"].a == ()
    assert len(panels) == len(doc["claims"])


def test_a_report_of_an_unknown_schema_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "comparison.json").write_text('{"schema": 99}')
    with pytest.raises(comparison.ComparisonError, match="field 'schema'"):
        comparison.load(tmp_path / "comparison.json")
    assert command.main(["compare", str(tmp_path / "nope"), str(tmp_path)]) == 2
