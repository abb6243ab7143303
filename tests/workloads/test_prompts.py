from __future__ import annotations

import hashlib
import io
import json
from pathlib import Path
from typing import Any

import pytest

from artifact import paths
from artifact.workloads import prompts as P


def test_recipes_are_valid_and_name_the_study_and_kick_sets() -> None:
    recipes = P.load_recipes()
    assert recipes["study"].counts == {"code": 10, "chat": 10, "math": 10, "grounded": 0,
                                       "edit": 0}
    assert recipes["accsplit"].counts == {"code": 2, "chat": 2, "math": 2, "grounded": 2,
                                          "edit": 0}
    assert recipes["edit"].counts["edit"] == 30 and recipes["edit"].holdout_of is None
    assert sum(recipes["kick"].counts.values()) == 3


def test_bad_recipe_names_file_and_field(tmp_path: Path) -> None:
    f = tmp_path / "prompt_sets.toml"
    f.write_text('[sets.x]\nseed = 1\ncode = "ten"\nmin_chars = 1\nmax_chars = 9\n')
    with pytest.raises(P.PromptSetError, match=r"prompt_sets.toml: sets.x.code: expected"):
        P.load_recipes(f)
    f.write_text("[sets.x]\nseed = 1\nbogus = 2\n")
    with pytest.raises(P.PromptSetError, match=r"sets.x.bogus: unknown key"):
        P.load_recipes(f)


def test_math_filter_takes_equations_and_leaves_code_and_prose() -> None:
    def is_math(t: str) -> bool:
        return bool(P.MATH_PATTERN.search(t) and P.MATH_NOTATION.search(t)
                    and not P.NOT_MATH.search(t))

    assert is_math("Solve the equation 3x + 2 = 11 for x.")
    assert is_math("Calculate 12 * 7 and explain.")
    assert not is_math("Write a python function to solve 2 + 2 = 4")
    assert not is_math("How are you today?")


def test_truncated_dataset_keeps_complete_conversations() -> None:
    text = '[{"id": "a", "conversations": []},\n {"id": "b"}, {"id": "c", "conv'
    assert [c["id"] for c in P.complete_json_objects(text)] == ["a", "b"]


def test_humaneval_pool_is_the_whole_dataset_sorted() -> None:
    pool = P.humaneval_candidates()
    assert len(pool) == 164
    assert [i for i, _ in pool] == sorted(i for i, _ in pool)
    assert pool[0][1].startswith("Complete the following Python function.")


def test_kick_set_is_deterministic_templated_and_hashed(tmp_path: Path) -> None:
    from artifact import toolchain

    model = toolchain.ensure_model()
    recipe = P.load_recipes()["kick"]
    a = P.build_prompt_set(recipe, model)
    b = P.build_prompt_set(recipe, model)
    assert a == b
    assert [p.domain for p in a] == ["code", "chat", "math"]
    for p in a:
        assert p.text.startswith("<|im_start|>system\n")
        assert p.text.endswith("<|im_start|>assistant\n")
        assert p.sha256 == hashlib.sha256(p.text.encode()).hexdigest()
    sha = P.write_prompt_set(a, tmp_path / "kick.jsonl")
    back, sha2 = P.read_prompt_set(tmp_path / "kick.jsonl")
    assert back == a and sha == sha2


def test_committed_runs_record_the_prompt_set_they_used() -> None:
    import json

    for config in sorted(paths.RUNS.glob("*/config.json")):
        c = json.loads(config.read_text())
        assert len(c["prompt_set"]["sha256"]) == 64, config


def test_grounded_pool_quotes_the_whole_function_within_the_length_bounds() -> None:
    pool = P.grounded_candidates(40, 900)
    assert 0 < len(pool) < 164 and [i for i, _ in pool] == sorted(i for i, _ in pool)
    _ident, message = pool[0]
    assert message.startswith("Return the following Python function unchanged")
    fn = message.split("```python\n", 1)[1].removesuffix("```")
    assert 40 <= len(fn) <= 900 and "def " in fn and "return" in fn


def test_edit_pool_quotes_the_whole_function_with_exactly_one_change() -> None:
    rows = {r["task_id"].replace("/", "-"): r for r in P._humaneval_rows()}
    pool = P.edit_candidates(600, 1500)
    assert len(pool) >= 36 and [i for i, _ in pool] == sorted(i for i, _ in pool)
    kinds = set()
    for ident, message in pool:
        r = rows[ident]
        fn = r["prompt"] + r["canonical_solution"]
        assert 600 <= len(fn) <= 1500
        assert message.startswith("Rewrite this Python function exactly as it is, with one change.")
        assert message.endswith(f"```python\n{fn}```")
        changes = [k for k, text in P.EDIT_CHANGES.items()
                   if text.format(name=r["entry_point"]) in message]
        assert len(changes) == 1, (ident, changes)
        kinds.update(changes)
    assert kinds == set(P.EDIT_CHANGES)  # all three kinds are drawn


def test_edit_change_is_fixed_per_problem() -> None:
    assert P.edit_candidates(600, 1500) == P.edit_candidates(600, 1500)
    assert P.edit_change("HumanEval-12", "longest") == P.edit_change("HumanEval-12", "longest")
    # the change depends on the problem only, not on the length bounds of the pool
    wide = dict(P.edit_candidates(0, 10_000))
    assert all(wide[i] == m for i, m in P.edit_candidates(600, 1500))


@pytest.mark.parametrize(("pilot", "study"), [("edit-pilot", "edit"), ("study-pilot", "study")])
def test_a_holdout_set_shares_no_prompt_with_the_set_it_holds_out_from(
        pilot: str, study: str) -> None:
    recipes = P.load_recipes()
    assert recipes[pilot].holdout_of == recipes[study]
    held = [pid for _d, pid, _m in P.select_candidates(recipes[pilot])]
    base = [pid for _d, pid, _m in P.select_candidates(recipes[study])]
    assert held and len(set(held)) == len(held) and not set(held) & set(base)
    assert held == [pid for _d, pid, _m in P.select_candidates(recipes[pilot])]


def test_unknown_or_chained_holdout_is_one_clear_error(tmp_path: Path) -> None:
    f = tmp_path / "prompt_sets.toml"
    base = "[sets.a]\nseed = 1\ncode = 1\nmin_chars = 1\nmax_chars = 9\n"
    f.write_text(base + '[sets.b]\nseed = 2\ncode = 1\nmin_chars = 1\nmax_chars = 9\n'
                 'holdout_of = "nope"\n')
    with pytest.raises(P.PromptSetError,
                       match=r"^prompt_sets.toml: sets.b.holdout_of: no recipe 'nope'") as e:
        P.load_recipes(f)
    assert "\n" not in str(e.value)
    f.write_text(base + '[sets.b]\nseed = 2\ncode = 1\nmin_chars = 1\nmax_chars = 9\n'
                 'holdout_of = "a"\n[sets.c]\nseed = 3\ncode = 1\nmin_chars = 1\n'
                 'max_chars = 9\nholdout_of = "b"\n')
    with pytest.raises(P.PromptSetError,
                       match=r"^prompt_sets.toml: sets.c.holdout_of: 'b' is itself a holdout"):
        P.load_recipes(f)
    f.write_text(base.replace("code = 1\n", 'code = 1\nholdout_of = "a"\n'))
    with pytest.raises(P.PromptSetError, match=r"sets.a.holdout_of: 'a' is itself a holdout"):
        P.load_recipes(f)


def test_study_selection_matches_the_committed_study_set() -> None:
    import json

    committed = [json.loads(line)["id"]
                 for line in (paths.PROMPTS / "study.jsonl").read_text().splitlines()]
    drawn = [pid for _d, pid, _m in P.select_candidates(P.load_recipes()["study"])]
    assert drawn == committed


@pytest.mark.parametrize("elements", [
    [{"id": "a", "v": "x\n  },\n  {\n"}, {"id": "é", "v": "\u4e2d"}, {"id": "c", "n": [1, {}]}],
    [{"a": 1}, [2], "s", {"b": 2}, 3],  # not all objects: read whole
])
@pytest.mark.parametrize("block", [1, 7, 2**20])
def test_streamed_array_is_the_text_reader_cut_anywhere(elements: list[Any], block: int) -> None:
    """Cut at every byte, the file read a block at a time gives what the text reader gives."""
    data = json.dumps(elements, indent=2, ensure_ascii=False).encode()
    for cut in range(1, len(data) + 1):
        piece = data[:cut]
        want = P.complete_json_objects(piece.decode("utf-8", errors="replace"))
        assert list(P.json_array_objects(io.BytesIO(piece), block=block)) == want, cut


def test_streamed_array_decodes_what_msgspec_refuses_as_the_text_reader_does() -> None:
    data = (b'[\n  {\n    "a": Infinity\n  },\n  {\n    "b": "\\ud83d \xff"\n  },\n'
            b'  {\n    "c": 1\n  }\n]')
    want = P.complete_json_objects(data.decode("utf-8", errors="replace"))
    assert len(want) == 3
    assert list(P.json_array_objects(io.BytesIO(data), block=3)) == want


def test_gemma_sets_are_the_core_prompts_in_chatml(tmp_path: Path) -> None:
    """Gemma's GGUF carries no chat template: its sets name ChatML, llama-server's fallback
    (the text its /apply-template gives for this model), over the SmolLM2 study's prompts."""
    recipes = P.load_recipes()
    for gemma, smol in (("gemma-study", "study"), ("gemma-edit", "edit")):
        assert recipes[gemma].template == "chatml" and recipes[smol].template == "gguf"
        assert P.select_candidates(recipes[gemma]) == P.select_candidates(recipes[smol])
    assert P.select_candidates(recipes["gemma-cost"]) == P.select_candidates(
        recipes["edit-pilot"])
    text = P.chat_template(tmp_path / "no.gguf", "chatml").render(
        messages=[{"role": "user", "content": "Hi there"}], add_generation_prompt=True)
    assert text == "<|im_start|>user\nHi there<|im_end|>\n<|im_start|>assistant\n"


def test_a_template_a_recipe_cannot_name_is_one_line(tmp_path: Path) -> None:
    f = tmp_path / "prompt_sets.toml"
    f.write_text('[sets.x]\nseed = 1\ncode = 1\nmin_chars = 1\nmax_chars = 9\n'
                 'template = "gemma"\n')
    with pytest.raises(P.PromptSetError, match=r"sets.x.template: expected one of gguf, chatml"):
        P.load_recipes(f)


def test_a_model_without_a_template_names_the_recipe_key(tmp_path: Path) -> None:
    model = tmp_path / "bare.gguf"
    model.write_bytes(b"")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(P, "string_metadata", lambda _p: {"general.name": "bare"})
        with pytest.raises(P.PromptSetError, match='template = "chatml"'):
            P.chat_template(model)
