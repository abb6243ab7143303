from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from artifact import paths
from artifact.workloads import prompts as P


def test_recipes_are_valid_and_name_the_study_and_kick_sets() -> None:
    recipes = P.load_recipes()
    assert recipes["study"].counts == {"code": 10, "chat": 10, "math": 10, "grounded": 0}
    assert recipes["accsplit"].counts == {"code": 2, "chat": 2, "math": 2, "grounded": 2}
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
