"""The artifact's exceptions: one tree, one root, one line each.

Every error that bad input, a missing file or a failed tool can cause is an
:class:`ArtifactError`. Its message is one line naming the file, the field and what was
expected. Command lines (:func:`cli`) and doit actions (:func:`doit_action`) catch
:class:`ArtifactError` once and print that line; anything else is a bug and keeps its traceback.
Library code raises and never prints: progress and logs go through :data:`artifact.log.Log`.

The tree::

    ArtifactError
     ├── SpecError              a campaign file (TOML) is wrong            artifact.spec
     ├── PromptSetError         a prompt-set recipe or file is wrong       ...workloads.prompts
     ├── SessionError           a session recipe or id lock is wrong       ...workloads.sessions
     │    └── SynthError        a synthetic target cannot be met           ...workloads.synthetic
     ├── ToolchainError         a download, hash check or build failed     artifact.toolchain
     ├── GGUFError              a model file is not GGUF as understood     artifact.gguf
     ├── ServerError            llama-server did not start or died         artifact.campaign.server
     ├── MachineBusy            others use the CPU: not quiet to measure   ...campaign.contention
     ├── HostLockBusy           another measurement holds this host's lock artifact.hostlock
     ├── RecordError            a run-directory file cannot be read        artifact.records
     ├── OutsideError           a path in the repository leads out of it   artifact.records
     ├── AnalysisError          raw runs cannot be analysed                artifact.analysis
     │    ├── ConfigError       one run's config.json is unusable (run skipped)
     │    └── MissingCellError  a cell the accsplit analysis needs has no runs (names it)
     ├── RenderError            the renderer's inputs are wrong            artifact.render
     │    ├── SummaryError      summary.json missing or off-schema
     │    ├── ManuscriptError   paper.md refers to what is not computed
     │    └── ComparisonError   comparison.json missing or off-schema   ...render.comparison
     ├── ClaimsError            the claims ledger is wrong, or (strict) not reproduced
     └── ReproduceError         a reproduction or comparison cannot go on  artifact.reproduce
          ├── PlanError         the selection or the folder is wrong       ....plan
          ├── RunSetError       a folder is not a set of runs              ....runsets
          ├── CalibrationError  the calibration requests failed            ....calibrate
          └── StrictError       --strict: claims failed (exit status 1)    ....command

Each class is re-exported by the module named beside it, so ``from artifact.spec import
SpecError`` keeps working.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar

__all__ = [
    "AnalysisError",
    "ArtifactError",
    "CalibrationError",
    "ClaimsError",
    "ComparisonError",
    "ConfigError",
    "GGUFError",
    "HostLockBusy",
    "MachineBusy",
    "ManuscriptError",
    "MissingCellError",
    "OutsideError",
    "PlanError",
    "PromptSetError",
    "RecordError",
    "RenderError",
    "ReproduceError",
    "RunSetError",
    "ServerError",
    "SessionError",
    "SpecError",
    "StrictError",
    "SummaryError",
    "SynthError",
    "ToolchainError",
    "cli",
    "doit_action",
    "one_line",
]


class ArtifactError(Exception):
    """Base of every expected error of the artifact; the message is one line."""


class SpecError(ArtifactError):
    """A campaign file is wrong; the message is one line naming the file and the field."""


class PromptSetError(ArtifactError):
    """A prompt-set recipe or a prompt-set file is wrong (one line, naming file and field)."""


class ToolchainError(ArtifactError):
    """A download, hash check or build failed; the message says which and what to do."""


class GGUFError(ArtifactError):
    """The file is not a GGUF file this reader understands."""


class ServerError(ArtifactError):
    """The server could not be started or died while starting."""


class HostLockBusy(ArtifactError):
    """Another measurement holds this host's lock and ``--no-wait`` was asked (names it)."""


class MachineBusy(ArtifactError):
    """Other processes kept the CPU busy past the quiet gate's timeout (one line naming them)."""


class RecordError(ArtifactError):
    """A run-directory file (``config.json``, ``metrics.json``, ...) cannot be read."""


class OutsideError(ArtifactError):
    """A path inside the repository leads out of it through a symbolic link: a run folder (or
    a file of one) whose data lie elsewhere. Not a :class:`RecordError`: a reader that skips an
    unreadable file must not skip this one quietly (one line naming it and where it points)."""


class AnalysisError(ArtifactError):
    """Base of the analysis errors; messages are one line."""


class ConfigError(AnalysisError):
    """A run's ``config.json`` cannot be used (the message names the run and the field)."""


class MissingCellError(AnalysisError):
    """A cell the acceptance-split analysis needs has no runs (the message names the cell)."""


class RenderError(ArtifactError):
    """A mistake in the renderer's inputs, reported in one line."""


class SessionError(ArtifactError):
    """A session recipe or id lock file is wrong; one line naming the file and the field."""


class SynthError(SessionError):
    """A synthetic target cannot be met (e.g. a token count the filler cannot reach)."""


class SummaryError(RenderError):
    """``summary.json`` is missing, unreadable or does not follow the schema."""


class ManuscriptError(RenderError):
    """The manuscript refers to something the computed files do not have."""


class ComparisonError(RenderError):
    """``comparison.json`` is missing, unreadable or does not follow its schema."""


class ClaimsError(ArtifactError):
    """The claims ledger is wrong, or (under ``--strict``) claims are not reproduced."""


class ReproduceError(ArtifactError):
    """A reproduction, or a comparison of two run sets, cannot go on (one line)."""


class PlanError(ReproduceError):
    """A reproduction cannot be planned as asked (one line naming what and why)."""


class RunSetError(ReproduceError):
    """A folder is not a set of runs (one line naming it)."""


class CalibrationError(ReproduceError):
    """The calibration requests did not complete (the server log says why)."""


class StrictError(ReproduceError):
    """Under ``--strict``, claims failed (the message lists them); exit status 1."""


def one_line(err: BaseException) -> str:
    """The error's message on one line (newlines folded), for a person to read.

    >>> one_line(SpecError("x.toml: run[1].k:\\n expected an integer"))
    'x.toml: run[1].k: expected an integer'
    """
    text = " ".join(part.strip() for part in str(err).splitlines() if part.strip())
    return text or type(err).__name__


P = ParamSpec("P")
R = TypeVar("R")


def cli(main: Callable[P, int]) -> Callable[P, int]:
    """Wrap a command line's ``main``: an :class:`ArtifactError` prints ``error: ...``, exit 2.

    >>> @cli
    ... def main() -> int:
    ...     raise SpecError("x.toml: run[1].k: expected a positive integer, got 0")
    >>> import contextlib, io
    >>> err = io.StringIO()
    >>> with contextlib.redirect_stderr(err):
    ...     code = main()
    >>> code, err.getvalue()
    (2, 'error: x.toml: run[1].k: expected a positive integer, got 0\\n')
    """

    @functools.wraps(main)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> int:
        try:
            return main(*args, **kwargs)
        except ArtifactError as err:
            print(f"error: {one_line(err)}", file=sys.stderr, flush=True)
            return 2

    return wrapper


def doit_action(fn: Callable[P, Any]) -> Callable[P, Any]:
    """Wrap a doit action: an :class:`ArtifactError` fails the task with its one line.

    doit prints a returned ``TaskFailed`` as its message, without a traceback; any other
    exception is a bug and doit shows its traceback.
    """

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> Any:
        try:
            return fn(*args, **kwargs)
        except ArtifactError as err:
            from doit.exceptions import TaskFailed

            return TaskFailed(f"error: {one_line(err)}")

    return wrapper
