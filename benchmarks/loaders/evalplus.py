"""HumanEval+ and MBPP+ in the EvalPlus release format, judged by EvalPlus's protocol.

A release record (``HumanEvalPlus.jsonl.gz``, its ``-Mini`` and ``-NoExtreme``
variants, ``MbppPlus.jsonl.gz``) has ``task_id``, ``prompt``, ``entry_point``,
``canonical_solution``, ``contract``, ``base_input``, ``plus_input`` and
``atol`` (``test``, HumanEval's own check, is not used: the ``-Mini`` file has
none).  Following ``evalplus/evaluate.py`` and ``evalplus/eval/__init__.py``
(github.com/evalplus/evalplus, commit 26d6d00):

* Each problem is a ``call`` suite on the entry point: the base inputs, then
  the plus inputs.  A solution passes HumanEval+ when it passes every one
  (EvalPlus: ``base_status == plus_status == "pass"``); ``extra["base_cases"]``
  says how many come first, for a base-only score.
* Expected outputs are what the reference (``prompt + canonical_solution``,
  as ``get_groundtruth`` runs it) returns on each input, computed in our own
  sandbox, once, and cached under ``$REWARDKIT_CACHE_DIR/evalplus`` keyed by
  the record's content.  They are computed when the file is loaded, for all
  of its records in one sandbox batch (:func:`prepare`; HumanEval+ from
  scratch takes about 14 s on 2 cores, cached about 1.5 s), so a loaded
  problem is ready to judge.  An input on which the
  reference raises is left out of the suite and listed in the problem's
  ``extra["skipped_inputs"]`` (EvalPlus would stop with the exception).
* The ``contract`` is not checked, as EvalPlus's evaluator does not check it:
  EvalPlus applies it only when generating inputs (``trusted_check_exec`` in
  ``evalplus/gen/util/__init__.py`` admits an input when the reference with
  its contract runs on it).  The release still holds inputs that violate
  their contract (62 plus inputs of HumanEval/32, one base input of
  HumanEval/116) and EvalPlus judges solutions on them.
  ``evalplus_problem(..., contract=True)`` applies that generation rule
  instead: the reference runs with its contract at the top of its body and
  inputs it rejects are left out.
* Returned values compare as ``unsafe_execute`` compares them
  (:func:`rewardkit.sandbox.evalplus_match.evalplus_matches`): exact equality, else
  ``np.allclose`` with rtol 1e-7 and the problem's ``atol``, which becomes
  1e-6 from the first float-valued expected output on when it is 0.  The
  special oracles are kept: HumanEval/32 ``find_zero`` (the polynomial is
  within ``atol`` of 0 at the answer) and MBPP+'s set-valued, not-None,
  ``are_equivalent``, ``sum_div``, ``surface_Area`` and
  ``digit_distance_nums`` tasks; MBPP+ inputs are turned into tuples, sets and complex
  numbers as ``mbpp_deserialize_inputs`` does.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import marshal
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...sandbox import Limits, Sandbox, TestSuite
from ...sandbox.suite import Case
from ..problem import Problem, Reference
from . import sandboxed
from .common import LoaderError, text

log = logging.getLogger("rewardkit.benchmarks.evalplus")

SOURCE = "evalplus"
KEYS = frozenset({"task_id", "prompt", "entry_point", "canonical_solution", "contract",
                  "base_input", "plus_input", "atol"})
CACHE_VERSION = 2  # bump when what is cached, or how it is computed, changes
FLOAT_ATOL = 1e-6  # unsafe_execute: "enforce atol for float comparison" when the problem's is 0
# the reference's limits while its outputs are computed (EvalPlus sets none; 4 GB is its evaluator's)
REFERENCE_LIMITS = Limits(time_s=120.0, memory_mb=4096, output_kb=256 * 1024)
# limits to judge candidates with: EvalPlus's 4 GB of memory (EVALPLUS_MAX_MEMORY_BYTES), and replies
# big enough for the largest expected output (HumanEval/130 returns a million floats, about 20 MB)
LIMITS = Limits(time_s=10.0, memory_mb=4096, output_kb=64 * 1024)
CHUNK = 1024  # inputs per sandbox job while computing expected outputs (calls go 256 to a frame)

# MBPP+ entry point -> oracle (evalplus/eval/_special_oracle.py and unsafe_execute's special cases)
MBPP_ORACLES = {
    **dict.fromkeys(("similar_elements", "find_char_long", "common_in_nested_lists", "extract_singly",
                     "larg_nnum", "intersection_array", "find_dissimilar", "Diff"), "set_equal"),
    **dict.fromkeys(("check_str", "text_match_three", "text_starta_endb"), "not_none"),
    "are_equivalent": "any_value", "sum_div": "or_zero", "surface_Area": "pyramid_surface",
    "digit_distance_nums": "digit_distance",
}


def is_evalplus(record: dict[str, Any]) -> bool:
    """Whether a record has the EvalPlus release format's keys (``test`` optional)."""
    return record.keys() >= KEYS


@dataclass(frozen=True)
class _Record:
    """A release record, read: what its problem is built from."""

    task_id: str
    where: str
    entry: str
    prompt: str
    reference: str  # prompt + canonical solution
    reference_run: str  # what computes the expected outputs (the reference, with its contract if asked)
    mbpp: bool
    atol: float
    base: list[list[Any]]
    plus: list[list[Any]]


def _read(record: dict[str, Any], where: str, contract: bool) -> _Record:
    task_id = text(record.get("task_id")).strip()
    where = where or f"evalplus task {task_id or '?'}"
    entry = text(record.get("entry_point")).strip()
    prompt, canonical = text(record.get("prompt")), text(record.get("canonical_solution"))
    if not entry or not canonical.strip():
        raise LoaderError(f"{where}: an EvalPlus record needs an 'entry_point' and a 'canonical_solution'")
    mbpp = task_id.lower().startswith("mbpp/")
    try:
        atol = float(record.get("atol") or 0.0)
        base = _inputs(record.get("base_input"), task_id if mbpp else None)
        plus = _inputs(record.get("plus_input"), task_id if mbpp else None)
    except (TypeError, ValueError) as exc:
        raise LoaderError(f"{where}: its inputs or atol cannot be read ({exc})") from exc
    if not base and not plus:
        raise LoaderError(f"{where}: no base_input and no plus_input: nothing to test a solution with")
    reference_run = (_with_contract(prompt, canonical, text(record.get("contract")), entry, mbpp)
                     if contract else prompt + canonical)
    return _Record(task_id, where, entry, prompt, prompt + canonical, reference_run, mbpp, atol, base, plus)


def prepare(records: list[dict[str, Any]], contract: bool = False) -> None:
    """Compute the expected outputs of many release records at once (one sandbox batch for all of
    them, instead of one per problem as :func:`evalplus_problem` alone would), into the cache.

    Records that cannot be read, or whose outputs are on disk already, are passed over.
    """
    readable = [read for read in (_readable(record, contract) for record in records) if read is not None]
    todo = [read for read in readable
            if not _cache_path(read.reference_run, read.entry, read.base + read.plus).is_file()]
    if todo:
        jobs = [(read.reference_run, read.entry, read.base + read.plus, read.where) for read in todo]
        for (code, entry, inputs, _), answers in zip(jobs, _compute(jobs), strict=True):
            if not isinstance(answers, LoaderError):  # evalplus_problem tries it again, and reports it
                _store(code, entry, inputs, answers)


def _readable(record: dict[str, Any], contract: bool) -> _Record | None:
    try:
        return _read(record, "", contract)
    except LoaderError:
        return None  # evalplus_problem reports it when the record is loaded


def evalplus_problem(record: dict[str, Any], source: str = SOURCE, where: str = "",
                     contract: bool = False) -> Problem:
    """One release record as a :class:`Problem` judged by EvalPlus's protocol (module docstring).

    ``contract=True`` leaves out the inputs that violate the record's contract.
    """
    read = _read(record, where, contract)
    inputs = read.base + read.plus
    answers = expected_outputs(read.reference_run, read.entry, inputs, read.where)
    oracle = _oracle(read.entry, read.mbpp)
    cases, atols, skipped, base_cases = _cases(read, answers, oracle)
    if not cases:
        raise LoaderError(f"{read.where}: its reference fails on every input ({skipped[0]['reason']}); "
                          "no runnable tests")
    if skipped:
        log.warning("%s: %d of %d inputs left out (the reference raises on them): %s",
                    read.where, len(skipped), len(inputs), skipped[0])
    extra: dict[str, Any] = {"compare": "evalplus", "base_cases": base_cases,
                             "atol": atols[0] if len(set(atols)) == 1 else atols}
    if oracle:
        extra["oracle"] = oracle
    suite = TestSuite("call", tuple(cases), entry_point=read.entry, extra=extra)
    return Problem(problem_id=read.task_id, statement=read.prompt, tests=suite, language="python",
                   title=read.entry, starter_code="" if read.mbpp else read.prompt,
                   references=[Reference(read.reference, "canonical")], source=source,
                   extra={"skipped_inputs": skipped} if skipped else {})


def _cases(read: _Record, answers: list[Answer],
           oracle: str | None) -> tuple[list[Case], list[float], list[dict[str, str]], int]:
    """The cases (base, then plus), each one's atol, the inputs left out, and how many cases are base."""
    cases: list[Case] = []
    atols: list[float] = []
    skipped: list[dict[str, str]] = []
    base_cases = 0
    for name, inputs, offset in (("base", read.base, 0), ("plus", read.plus, len(read.base))):
        current = read.atol  # unsafe_execute's atol changes for the rest of one run (base, then plus)
        for index, args in enumerate(inputs):
            kind, value = answers[offset + index]
            if kind != "value":
                skipped.append({"input": f"{name}[{index}]", "reason": _last_line(value)})
                continue
            if oracle == "not_none":
                value = value is not None  # get_groundtruth's output_not_none
            if current == 0 and oracle != "poly_root" and _is_floats(value):
                current = FLOAT_ATOL
            cases.append(Case(args=tuple(args), expected=value))
            atols.append(current)
        if name == "base":
            base_cases = len(cases)
    return cases, atols, skipped, base_cases


def base_only(problem: Problem) -> TestSuite:
    """The problem's suite cut to its base inputs (HumanEval's own inputs): EvalPlus's ``--base-only``."""
    suite = problem.tests
    count = int(suite.extra.get("base_cases", len(suite.cases)))
    extra = dict(suite.extra)
    if isinstance(extra.get("atol"), list):
        extra["atol"] = extra["atol"][:count]
    return TestSuite("call", suite.cases[:count], entry_point=suite.entry_point, extra=extra)


# -- inputs ------------------------------------------------------------------------------------
def _inputs(raw: Any, mbpp_task: str | None) -> list[list[Any]]:
    values = json.loads(raw) if isinstance(raw, str) else raw
    if values is None:
        return []
    if not isinstance(values, list) or not all(isinstance(args, list) for args in values):
        raise ValueError("each input must be a list of arguments")
    return [list(args) for args in (_mbpp_inputs(mbpp_task, values) if mbpp_task else values)]


def _tuples(value: Any) -> Any:
    return tuple(_tuples(item) for item in value) if isinstance(value, list) else value


# evalplus/data/mbpp.py mbpp_deserialize_inputs: MBPP+ task number -> how one input is rebuilt
_MBPP_INPUT: dict[int, Callable[[list[Any]], list[Any]]] = {}
for _ids, _rule in (
    ((2, 116, 132, 143, 222, 261, 273, 394, 399, 421, 424, 429, 470, 560, 579, 596, 616, 630, 726, 740,
      744, 809), lambda inp: [tuple(arg) for arg in inp]),
    ((63, 64, 70, 94, 120, 237, 272, 299, 400, 409, 417, 438, 473, 614, 780),
     lambda inp: [[tuple(item) for item in arg] for arg in inp]),
    ((75, 413, 444, 753), lambda inp: [[tuple(item) for item in inp[0]], inp[1]]),
    ((106, 750), lambda inp: [inp[0], tuple(inp[1])]),
    ((115,), lambda inp: [[set(item) if isinstance(item, list) and item else {} for item in inp[0]]]),
    ((124,), lambda inp: [float(inp[0]), complex(inp[1])]),
    ((250, 405, 446, 617, 720, 763, 808), lambda inp: [tuple(inp[0]), inp[1]]),
    ((259, 401, 445), lambda inp: [tuple(tuple(item) for item in arg) for arg in inp]),
    ((278,), lambda inp: [tuple(tuple(item) if isinstance(item, list) else item for item in inp[0])]),
    ((307,), lambda inp: [tuple(inp[0]), inp[1], inp[2]]),
    ((722,), lambda inp: [{key: tuple(value) for key, value in inp[0].items()}, *inp[1:]]),
    ((252,), lambda inp: [complex(inp[0])]),
    ((580, 615, 791), lambda inp: list(_tuples(inp))),
):
    _MBPP_INPUT.update(dict.fromkeys(_ids, _rule))


def _mbpp_inputs(task_id: str, inputs: list[Any]) -> list[Any]:
    rule = _MBPP_INPUT.get(int(task_id.rsplit("/", 1)[-1]))
    return [rule(inp) for inp in inputs] if rule else inputs


def _oracle(entry: str, mbpp: bool) -> str | None:
    if not mbpp:
        return "poly_root" if entry == "find_zero" else None
    return MBPP_ORACLES.get(entry)


def _is_floats(value: Any) -> bool:
    """``is_floats`` of ``evalplus/eval/__init__.py``: a float, or a non-empty list/tuple of floats."""
    if isinstance(value, float):
        return True
    return isinstance(value, (list, tuple)) and bool(value) and all(isinstance(v, float) for v in value)


def _with_contract(prompt: str, canonical: str, contract: str, entry: str, mbpp: bool) -> str:
    """The reference with its contract at the top of the body (``evalplus/inputgen.py``'s ``c_code``)."""
    if not contract.strip():
        return prompt + canonical
    if not mbpp:  # the prompt ends inside the function, after its docstring
        return prompt + contract + canonical
    lines = canonical.split("\n")
    for index, line in enumerate(lines):
        if line.startswith(f"def {entry}"):
            return prompt + "\n".join([*lines[:index + 1], contract, *lines[index + 1:]])
    return prompt + canonical


def _last_line(message: Any) -> str:
    lines = [line for line in str(message).strip().splitlines() if line.strip()]
    return lines[-1][:300] if lines else "it raised"


# -- expected outputs ----------------------------------------------------------------------------
Answer = tuple[str, Any]  # ("value", v) or ("error", message)


def expected_outputs(code: str, entry: str, inputs: list[list[Any]], where: str = "") -> list[Answer]:
    """What ``entry`` of ``code`` returns (or raises) on each input, run in rewardkit's sandbox.

    Cached on disk by content, unless an input raised (the fault may be the
    sandbox's, mended later); LoaderError when the code cannot run at all.
    """
    cached = _cached(code, entry, inputs)
    if cached is not None:
        return cached
    answers = _compute([(code, entry, inputs, where)])[0]
    if isinstance(answers, LoaderError):
        raise answers
    _store(code, entry, inputs, answers)
    return answers


def _cached(code: str, entry: str, inputs: list[list[Any]]) -> list[Answer] | None:
    answers = _read_cache(_cache_path(code, entry, inputs))
    return answers if answers is not None and len(answers) == len(inputs) else None


def _store(code: str, entry: str, inputs: list[list[Any]], answers: list[Answer]) -> None:
    """Keep computed outputs on disk, unless an input raised."""
    if any(kind != "value" for kind, _ in answers):
        return
    path = _cache_path(code, entry, inputs)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(f".{os.getpid()}.tmp")
    partial.write_bytes(marshal.dumps([value for _, value in answers]))
    partial.replace(path)


def cache_dir() -> Path:
    """Where computed expected outputs are kept: ``$REWARDKIT_CACHE_DIR/evalplus``."""
    root = Path(os.environ.get("REWARDKIT_CACHE_DIR", Path.home() / ".cache" / "rewardkit"))
    return root / "evalplus"


def _cache_path(code: str, entry: str, inputs: list[list[Any]]) -> Path:
    # marshal: the inputs' exact types and values at C speed (a set's order may differ between
    # processes: a cache miss at worst); its format is tied to the Python version, and so the key
    key = hashlib.sha256(marshal.dumps((CACHE_VERSION, code, entry, inputs)))
    return cache_dir() / f"{key.hexdigest()}.marshal"


def _read_cache(path: Path) -> list[Answer] | None:
    """The values kept at ``path`` (marshal: plain data of any size, some ten times faster to read
    than JSON; only values are kept, as only runs with no error are); None if unreadable."""
    try:
        values = marshal.loads(path.read_bytes())  # nosec B302 - our own cache, trusted as the dataset is (SECURITY.md)
    except (OSError, EOFError, ValueError, TypeError):
        return None
    return [("value", value) for value in values] if isinstance(values, list) else None


@functools.cache
def _sandbox() -> Sandbox:
    """The sandbox that runs references (trusted suites: the recording check runs in this process)."""
    return Sandbox(workers=os.cpu_count() or 1, limits=REFERENCE_LIMITS, trust_suites=True)


def _answers(args_list: list[list[Any]]) -> Callable[[Any], list[Answer]]:
    """What the recording check asks of the sandboxed reference: each input's answer, many calls
    to a frame, up to the first that ends its process (time, memory)."""
    def ask(candidate: Any) -> list[Answer]:
        return [("value", value) if kind == "value" else ("error", value)
                for kind, value in candidate.answer_many(args_list)]

    return ask


def _compute(jobs: list[tuple[str, str, list[list[Any]], str]]) -> list[list[Answer] | LoaderError]:
    """Each job's (code, entry, inputs, where) answers, from one sandbox batch of all their chunks
    (a LoaderError for a job whose code does not run)."""
    chunks = [(number, inputs[start:start + CHUNK]) for number, (_, _, inputs, _) in enumerate(jobs)
              for start in range(0, len(inputs), CHUNK)]
    collected = sandboxed.collect(_sandbox(), [(jobs[number][0], jobs[number][1], _answers(chunk))
                                               for number, chunk in chunks])
    answers: list[list[Answer] | LoaderError] = [[] for _ in jobs]
    for (number, chunk), (result, got) in zip(chunks, collected, strict=True):
        sofar = answers[number]
        if isinstance(sofar, LoaderError):
            continue
        if got is None:
            answers[number] = LoaderError(f"{jobs[number][3]}: its reference solution does not run "
                                          f"({result.status}): {_last_line(result.feedback)}")
            continue
        unanswered = len(chunk) - len(got)
        sofar += got + [("error", f"not run: {result.status} before it")] * unanswered
    return answers
