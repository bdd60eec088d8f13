"""OpenRLHF's remote reward protocol, ``POST /openrlhf``, as OpenRLHF's current source speaks it.

Read in OpenRLHF 3c3be62 (2026-08): ``openrlhf/cli/train_ppo_ray.py`` takes
``--reward.remote_url`` (split at commas into several servers) and
``--data.label_key``; ``openrlhf/datasets/prompts_dataset.py`` (``preprocess_data``)
sends the label column's value as is, ``""`` when no label key is set.
``openrlhf/utils/agent.py``, ``SingleTurnAgentExecutor``: ``execute`` decodes
prompt + response tokens with ``skip_special_tokens=False`` (so the text
ends with the model's EOS text, such as ``<|im_end|>``) and
``_fetch_rewards_via_http`` posts ``{"query": [...], "prompts": [...],
"labels": [...]}`` as JSON, one sample per request, no headers of its own,
180 s timeout, 5 tries a second apart.  It reads ``rewards`` (the advantage's
reward), ``scores`` (``trainer/ppo_utils/samples_generator.py``,
``_generate_vllm``: dynamic filtering keeps a prompt whose samples' mean score
lies strictly inside ``--algo.dynamic_filtering_range``, default (0, 1); the
example ``examples/python/reward_func.py`` calls them "0-1 reward") and
``extra_logs`` (one value per sample and key, made a tensor and logged).

End-of-sequence text is cut off the end of each completion, repeatedly (an
EOS followed by pad text), as OpenRLHF's reward server did until its
``serve_rm.strip_sequence`` was removed (commit 494850f, 2025-05), and only at
the end, so code that mentions ``</s>`` keeps it.  Markers are
:data:`DEFAULT_END_MARKERS` plus any named by ``eos=`` in the URL (repeat the
parameter for more; no commas, which OpenRLHF would take for a second server).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from ..rewards import ConfigError, Reward, RewardResult, components
from ..rewards.engine import COLUMNS, SUITE_COLUMNS
from ..rewards.faults import FAULT_KEY, apply, fault_policy
from ..sandbox.formats import is_foreign

# End-of-sequence and pad texts of common chat models' tokenizers.
DEFAULT_END_MARKERS: tuple[str, ...] = (
    "<|im_end|>",  # ChatML: Qwen 2/2.5/3 and Phi-4 chat EOS
    "<|endoftext|>",  # Qwen's pad and base EOS, GPT-2, StarCoder
    "</s>",  # Llama 2, Mistral, Mixtral, CodeLlama
    "<|eot_id|>", "<|end_of_text|>", "<|finetune_right_pad_id|>",  # Llama 3.x
    "<|end|>",  # Phi-3
    "<end_of_turn>", "<eos>", "<pad>",  # Gemma
    "<｜end▁of▁sentence｜>",  # DeepSeek V2/V3/R1
    "<|EOT|>",  # DeepSeek-Coder instruct
)
PASS_RATE = "pass_rate"


def end_markers(eos: Iterable[str] = ()) -> tuple[str, ...]:
    """The defaults and ``eos``, longest first (so no marker is cut short by one it ends with)."""
    return tuple(sorted({*DEFAULT_END_MARKERS, *(e for e in eos if e)}, key=len, reverse=True))


def strip_end(text: str, markers: Sequence[str]) -> str:
    """``text`` without the markers it ends with and the whitespace around and between them;
    whitespace before the first stays, as the model wrote it.  Linear in the text's length."""
    end = len(text)
    while True:
        cut = end
        while cut and text[cut - 1].isspace():
            cut -= 1
        marker = next((m for m in markers if text.endswith(m, 0, cut)), None)
        if marker is None:
            return text[:end]
        end = cut - len(marker)


def strip_start(text: str, markers: Sequence[str]) -> str:
    """``text`` without the markers it starts with (left padding)."""
    start = 0
    while (marker := next((m for m in markers if text.startswith(m, start)), None)) is not None:
        start += len(marker)
    return text[start:]


def completion_of(query: str, prompt: str, markers: Sequence[str]) -> str:
    """The completion in ``query``: what follows the prompt (also after left padding), without
    its end text; the whole query when the prompt is not found in front of it."""
    if prompt:
        for text in (query, strip_start(query, markers)):
            if text.startswith(prompt):
                return strip_end(text[len(prompt):], markers)
    return strip_end(query, markers)


def request_batch(queries: Sequence[str], prompts: Sequence[str] | None, labels: Sequence[Any] | None,
                  eos: Iterable[str] = ()) -> tuple[list[str], dict[str, list[Any]]]:
    """Completions and dataset columns from OpenRLHF's ``{query, prompts, labels}``.

    A label (the ``--data.label_key`` column) is the test suite (in any shape a
    suite is read from: open-r1's ``verification_info`` too), or an object of
    columns with a ``tests`` or ``verification_info`` key (plus ``baseline_code``,
    ``language``, ...), either as JSON text or as an object.
    """
    count = len(queries)
    if prompts is not None and len(prompts) != count:
        raise ConfigError(f"{len(prompts)} prompts for {count} queries")
    if labels is None or len(labels) != count or any(label in ("", None) for label in labels):
        raise ConfigError("every query needs a label: start OpenRLHF with --data.label_key naming the "
                          "dataset column that holds the test suite (or an object of columns with "
                          "'tests'); OpenRLHF sends that column as 'labels'")
    markers = end_markers(eos)
    completions = [completion_of(query, prompt, markers)
                   for query, prompt in zip(queries, prompts or [""] * count, strict=True)]
    rows = [_label_columns(index, label) for index, label in enumerate(labels)]
    keys = sorted({key for row in rows for key in row})
    return completions, {key: [row.get(key) for row in rows] for key in keys}


def _label_columns(index: int, label: Any) -> dict[str, Any]:
    if isinstance(label, str):
        try:
            label = json.loads(label)
        except ValueError as exc:
            raise ConfigError(f"label {index} is not JSON: {exc}") from exc
    if isinstance(label, dict) and not _is_suite(label) and any(name in label for name in SUITE_COLUMNS):
        return {key: label[key] for key in COLUMNS if key in label}
    return {"tests": label}


def _is_suite(label: dict[str, Any]) -> bool:
    """Whether a label object is one suite (rewardkit's own, verl's or open-r1's), not columns."""
    return "mode" in label or "cases" in label or is_foreign(label)


def with_pass_rate(reward: Reward) -> Reward:
    """``reward`` with the pass rate beside its components (weight 0, so the same value; the
    same engine, so the same runs): the source of ``scores``."""
    if any(component.name == PASS_RATE for component, _ in reward.components):
        return reward
    return reward.with_components((components.pass_rate(), 0.0))


def answer_body(results: Sequence[RewardResult], names: Sequence[str],
                fault: str | float | None = None) -> dict[str, Any]:
    """OpenRLHF's answer: a list per key, a number per sample.

    ``rewards``: the preset's signed total.  ``scores``: the fraction of the tests passed, in
    [0, 1], the accuracy that dynamic filtering (DAPO's dynamic sampling) averages over a
    prompt's samples: a prompt whose samples all pass every test or all pass none is dropped
    (a pass rate rather than a 0/1 verdict, so partial credit keeps a prompt).  ``extra_logs``:
    each component named in ``names``, in order, then ``rewardkit_fault``.

    OpenRLHF turns every value into a tensor and cannot drop a sample (:mod:`..rewards.faults`),
    so a sample left without a value by a sandbox fault gets the ``fault`` policy's reward
    (default 0.0), 0.0 for its score and components, and ``rewardkit_fault`` 1.0; ``"raise"``
    raises :class:`~..rewards.faults.RewardFault` (an error answer, which OpenRLHF retries).
    """
    policy = fault_policy(fault, "openrlhf")
    rewards = [apply(r.value, policy, r.info, who="OpenRLHF") for r in results]
    return {"rewards": [_number(value) for value in rewards],
            "scores": [_number(r.components.get(PASS_RATE)) for r in results],
            "extra_logs": {**{name: [_number(r.components.get(name)) for r in results] for name in names},
                           FAULT_KEY: [float(r.value is None) for r in results]}}


def _number(value: float | None) -> float:
    return 0.0 if value is None else float(value)
