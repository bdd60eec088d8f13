"""Length and repetition shaping, as the components TRL and open-r1 users expect beside ours.

* :func:`soft_overlong_punishment`: DAPO's soft overlong punishment (Eq. 13 of
  https://huggingface.co/papers/2503.14476), as in TRL's
  ``trl/rewards/other_rewards.py:get_soft_overlong_punishment`` and open-r1's
  ``src/open_r1/rewards.py:get_soft_overlong_punishment``.
* :func:`repetition_penalty`: the n-gram repetition penalty of "Demystifying Long
  Chain-of-Thought Reasoning" (https://huggingface.co/papers/2502.03373, App. C.2), as in
  TRL's ``trl/rewards/other_rewards.py:get_repetition_penalty_reward`` (token n-grams) and
  open-r1's ``get_repetition_penalty_reward`` (lower-cased whitespace words).
* :func:`cosine_scaled`: the cosine length schedule of the same paper (App. C.1), as in
  TRL's ``trl/rewards/accuracy_rewards.py:get_cosine_scaled_reward``; "correct" is
  whether the code passed every test, read from the run the other components share.

**Lengths** are tokens when the trainer passes ``completion_ids`` (TRL's GRPOTrainer
does, one list of token ids per completion); otherwise the tokens of ``tokenize(text)``
when a ``tokenize`` function is given (e.g. ``lambda s: tok.encode(s, add_special_tokens=False)``);
otherwise characters divided by ``chars_per_token`` (default 1: characters, open-r1's
unit for its cosine reward).  The repetition penalty's n-grams are over the same tokens,
and without them over lower-cased whitespace-separated words (open-r1's).

A completion that is not text, is empty or blank, or is longer than
``extract.MAX_COMPLETION_CHARS`` gets the component's lowest value.  Only
:func:`cosine_scaled` needs a sandbox run; a fault in it leaves the sample out (None).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Sequence

from ..sandbox import Status
from .components import Component, Scored, recipe
from .engine import ConfigError, View

Tokenize = Callable[[str], Sequence[Hashable]]


# -- the formulas -----------------------------------------------------------------------------
def soft_overlong(length: float, max_completion_len: int, soft_punish_cache: int) -> float:
    """DAPO Eq. 13: 0 up to ``L_max - L_cache``, then a linear fall to -1 at ``L_max``, -1 beyond.

    >>> soft_overlong(80, 100, 20), soft_overlong(90, 100, 20), soft_overlong(100, 100, 20)
    (0.0, -0.5, -1.0)
    >>> soft_overlong(101, 100, 20), soft_overlong(100, 100, 0)
    (-1.0, 0.0)
    """
    start = max_completion_len - soft_punish_cache
    if length <= start:
        return 0.0
    if length <= max_completion_len:
        return (start - length) / soft_punish_cache
    return -1.0


def repetition(tokens: Sequence[Hashable], ngram_size: int, max_penalty: float) -> float:
    """``(1 - distinct n-grams / all n-grams) * max_penalty``; 0 with fewer than ``ngram_size`` tokens.

    >>> repetition([1, 2, 3, 4], 2, -1.0), repetition([5, 5, 5, 5, 5], 2, -1.0)
    (0.0, -0.75)
    """
    count = len(tokens) - ngram_size + 1
    if count < 1:
        return 0.0
    distinct = {tuple(tokens[i:i + ngram_size]) for i in range(count)}
    share = 1.0 - len(distinct) / count
    return share * max_penalty if share else 0.0


def cosine(length: float, correct: bool, max_len: int, min_value_wrong: float = -1.0,
           max_value_wrong: float = -0.5, min_value_correct: float = 0.5,
           max_value_correct: float = 1.0) -> float:
    """``v_min + (v_max - v_min)(1 + cos(π·min(length/max_len, 1)))/2``.

    Correct: from ``max_value_correct`` at length 0 down to ``min_value_correct`` at
    ``max_len``; wrong: from ``min_value_wrong`` up to ``max_value_wrong``.  Lengths past
    ``max_len`` count as ``max_len`` (TRL clamps; open-r1 does not, so its schedule rises again).

    >>> cosine(0, True, 100), cosine(50, True, 100), cosine(100, True, 100), cosine(500, True, 100)
    (1.0, 0.75, 0.5, 0.5)
    >>> cosine(0, False, 100), cosine(50, False, 100), cosine(100, False, 100)
    (-1.0, -0.75, -0.5)
    """
    progress = min(length / max_len, 1.0)
    if correct:
        low, high = min_value_correct, max_value_correct
    else:
        low, high = max_value_wrong, min_value_wrong
    return low + 0.5 * (high - low) * (1.0 + math.cos(progress * math.pi))


# -- reading lengths and tokens -------------------------------------------------------------------
def _blank(view: View) -> str | None:
    """Why the completion cannot be measured (not text, too long, empty), if so."""
    if view.text.value is None:
        return view.text.problem
    return None if view.text.value.strip() else "empty completion"


def _ids(view: View) -> Sequence[Hashable] | None:
    ids = view.columns.get("completion_ids")
    return ids if isinstance(ids, (list, tuple)) else None


def _length(view: View, tokenize: Tokenize | None, chars_per_token: float) -> tuple[float, str]:
    """The completion's length and its unit (tokens, or characters over ``chars_per_token``)."""
    ids = _ids(view)
    if ids is not None:
        return float(len(ids)), "completion_ids"
    text = view.text.value or ""
    if tokenize is not None:
        return float(len(tokenize(text))), "tokenize"
    return len(text) / chars_per_token, "characters"


def _check(condition: bool, message: str) -> None:
    if not condition:
        raise ConfigError(message)


def _check_unit(chars_per_token: float) -> None:
    _check(chars_per_token > 0, f"chars_per_token must be positive, got {chars_per_token}")


# -- the components --------------------------------------------------------------------------------
@recipe
def soft_overlong_punishment(max_completion_len: int, soft_punish_cache: int, *,
                             tokenize: Tokenize | None = None,
                             chars_per_token: float = 1.0) -> Component:
    """DAPO's soft overlong punishment in [-1, 0] (:func:`soft_overlong`); no defaults, as in TRL."""
    _check(max_completion_len > 0, f"max_completion_len must be positive, got {max_completion_len}")
    _check(0 <= soft_punish_cache <= max_completion_len,
           f"soft_punish_cache must be in [0, max_completion_len={max_completion_len}], "
           f"got {soft_punish_cache}")
    _check_unit(chars_per_token)

    def compute(view: View) -> Scored:
        problem = _blank(view)
        if problem:
            return -1.0, {"reason": problem}
        length, unit = _length(view, tokenize, chars_per_token)
        return soft_overlong(length, max_completion_len, soft_punish_cache), {"length": length,
                                                                              "unit": unit}

    return Component("soft_overlong_punishment", compute, lowest=-1.0)


@recipe
def repetition_penalty(ngram_size: int = 3, max_penalty: float = -1.0, *,
                       tokenize: Tokenize | None = None) -> Component:
    """Repeated n-grams' share times ``max_penalty``, in [max_penalty, 0] (:func:`repetition`).

    Defaults are TRL's (and open-r1's training config's): 3-grams, -1.
    """
    _check(ngram_size >= 1, f"ngram_size must be at least 1, got {ngram_size}")
    _check(max_penalty <= 0, f"max_penalty must not be positive, got {max_penalty}")

    def compute(view: View) -> Scored:
        problem = _blank(view)
        if problem:
            return max_penalty, {"reason": problem}
        tokens = _ids(view)
        unit = "completion_ids"
        if tokens is None:
            text = view.text.value or ""
            tokens, unit = (tokenize(text), "tokenize") if tokenize else (text.lower().split(), "words")
        return repetition(tokens, ngram_size, max_penalty), {"tokens": len(tokens), "unit": unit}

    return Component("repetition_penalty", compute, lowest=max_penalty)


@recipe
def cosine_scaled(max_len: int, min_value_wrong: float = -1.0, max_value_wrong: float = -0.5,
                  min_value_correct: float = 0.5, max_value_correct: float = 1.0, *,
                  tokenize: Tokenize | None = None, chars_per_token: float = 1.0) -> Component:
    """Correctness (every test passed) scaled by length on a cosine schedule (:func:`cosine`).

    Defaults are TRL's; ``max_len`` has none, as in TRL (open-r1's function defaults to
    1000 characters).  A completion without code counts as wrong, at its length.
    """
    _check(max_len > 0, f"max_len must be positive, got {max_len}")
    _check_unit(chars_per_token)
    values = (min_value_wrong, max_value_wrong, min_value_correct, max_value_correct)
    lowest = min(values)

    def compute(view: View) -> Scored:
        if view.result is not None and view.result.status == Status.SANDBOX_ERROR:
            return None, {"status": view.result.status.value}
        problem = _blank(view)
        if problem:
            return lowest, {"reason": problem}
        passed = view.result is not None and view.result.passed
        length, unit = _length(view, tokenize, chars_per_token)
        value = cosine(length, passed, max_len, *values)
        return value, {"passed": passed, "length": length, "unit": unit}

    return Component("cosine_scaled", compute, frozenset({"run"}), lowest)


FACTORIES: dict[str, Callable[..., Component]] = {
    "soft_overlong_punishment": soft_overlong_punishment,
    "repetition_penalty": repetition_penalty,
    "cosine_scaled": cosine_scaled,
}
