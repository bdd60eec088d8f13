"""``POST /openrlhf`` called the way OpenRLHF's current source calls a remote reward.

OpenRLHF (``openrlhf/utils/agent.py``, ``SingleTurnAgentExecutor.execute`` and
``_fetch_rewards_via_http``) decodes prompt + response tokens with
``skip_special_tokens=False`` and posts, per sample, ``{"query": [text],
"prompts": [prompt], "labels": [label]}`` as JSON to the ``--reward.remote_url``
as given (no headers of its own, so the token rides in the URL); it reads
``rewards``, ``scores`` (dynamic filtering) and ``extra_logs``.  :func:`post`
sends exactly that, to the real service on loopback.
"""

from __future__ import annotations

import json
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from serve_helpers import Service

from rewardkit.rewards import Engine, afterburner, cisq_grpo, pass_rate

STDIO = {"mode": "stdio", "cases": [{"input": f"{n}\n", "output": f"{2 * n}\n"} for n in (1, 5, 40)]}
PROMPT = "<|im_start|>user\nRead n, print 2n.<|im_end|>\n<|im_start|>assistant\n"
BARE = "n = int(input())\nprint(n * 2)\n"  # a bare-code answer, as models often give


def post(service: Service, prompts: list[str], responses: list[str], labels: list[Any],
         query: str = "preset=cisq_grpo") -> dict[str, Any]:
    """OpenRLHF's request: the URL with its query string as configured, the body as aiohttp's
    ``json=`` sends it; one request for the batch (OpenRLHF sends one sample per request)."""
    url = f"{service.url}/openrlhf?{query}&token={service.token}"
    payload = {"query": [p + r for p, r in zip(prompts, responses, strict=True)],
               "prompts": prompts, "labels": labels}
    answer = httpx.post(url, content=json.dumps(payload), timeout=120,
                        headers={"Content-Type": "application/json"})
    assert answer.status_code == 200, answer.text
    return dict(answer.json())


def test_the_answer_has_openrlhf_s_shape(service: Service) -> None:
    """A list per key, one number per sample; ``extra_logs`` holds each component and the pass rate."""
    responses = [f"```python\n{BARE}```<|im_end|>", "```python\nprint(0)\n```<|im_end|>"]
    data = post(service, [PROMPT] * 2, responses, [json.dumps(STDIO)] * 2)
    assert set(data) == {"rewards", "scores", "extra_logs"}
    assert list(data["extra_logs"]) == ["code_block_format", "pass_rate", "quality", "rewardkit_fault"]
    for values in [data["rewards"], data["scores"], *data["extra_logs"].values()]:
        assert len(values) == 2 and all(isinstance(v, float) for v in values)
    assert data["scores"] == data["extra_logs"]["pass_rate"] == [1.0, 0.0]


@pytest.mark.parametrize("end", ["<|im_end|>", "</s>", "<|endoftext|>", "<|eot_id|>",
                                 "<｜end▁of▁sentence｜>", "<end_of_turn>",
                                 "<|im_end|><|endoftext|><|endoftext|><|endoftext|>",  # EOS, then pads
                                 "</s>\n<pad><pad>"])
def test_a_completion_ending_in_end_of_sequence_text_scores_as_the_bare_completion(
        service: Service, engine: Engine, end: str) -> None:
    local = cisq_grpo(engine=engine).evaluate([BARE, BARE + end], {"tests": [STDIO, STDIO]})
    assert local[1].value is not None and local[0].value is not None
    assert local[1].value < local[0].value  # the end text, left in, breaks the code
    data = post(service, [PROMPT], [BARE + end], [json.dumps(STDIO)])
    assert data["rewards"] == [local[0].value]
    assert data["scores"] == [1.0]


def test_eos_names_the_tokenizer_s_own_end_text(service: Service, engine: Engine) -> None:
    """An end text outside the defaults is stripped when the URL names it (URL-encoded, no comma:
    OpenRLHF splits --reward.remote_url at commas)."""
    own = "<|my_model_end|>"
    bare, = cisq_grpo(engine=engine).evaluate([BARE], {"tests": [STDIO]})
    label = [json.dumps(STDIO)]
    kept = post(service, [PROMPT], [BARE + own + "<|endoftext|>"], label)
    assert kept["rewards"][0] < bare.value  # type: ignore[operator]
    named = post(service, [PROMPT], [BARE + own + "<|endoftext|>"], label,
                 query=f"preset=cisq_grpo&eos={quote(own)}&eos={quote('<|other|>')}")
    assert named["rewards"] == [bare.value]


def test_end_text_is_stripped_only_at_the_end() -> None:
    from rewardkit.serve.openrlhf import DEFAULT_END_MARKERS, strip_end, strip_start

    markers = (*DEFAULT_END_MARKERS, "<|mine|>")
    assert strip_end("x = '</s>'\nprint(x)\n</s>", markers) == "x = '</s>'\nprint(x)\n"
    assert strip_end("print(1)\n<|im_end|>\n<|endoftext|>  ", markers) == "print(1)\n"
    assert strip_end("print(1)  \n", markers) == "print(1)  \n"  # no marker: untouched
    assert strip_end("<|mine|><|mine|>", markers) == ""
    assert strip_start("<|endoftext|><|endoftext|>Q: x", markers) == "Q: x"


def test_stripping_is_linear_in_the_text() -> None:
    """A client's 2 MB of pad text costs a fraction of a second (cut by slicing, it took minutes)."""
    from rewardkit.serve.openrlhf import end_markers, strip_end, strip_start

    started = time.perf_counter()
    assert strip_end("x" + "<pad>\n" * 300_000, end_markers()) == "x"
    assert strip_start("<pad>" * 400_000 + "x", end_markers()) == "x"
    assert time.perf_counter() - started < 20


def test_a_left_padded_query_still_loses_its_prompt(service: Service, engine: Engine) -> None:
    """Older OpenRLHF releases decoded padded batches: pad text before the prompt, after the EOS."""
    bare, = cisq_grpo(engine=engine).evaluate([BARE], {"tests": [STDIO]})
    padded = httpx.post(f"{service.url}/openrlhf?token={service.token}", timeout=120,
                        json={"query": ["<|endoftext|>" * 3 + PROMPT + BARE + "<|im_end|><|endoftext|>"],
                              "prompts": [PROMPT], "labels": [json.dumps(STDIO)]})
    assert padded.status_code == 200, padded.text
    assert padded.json()["rewards"] == [bare.value]


HOSTILE = [
    ("right", "n = int(input())\nprint(n * 2)\n"),
    ("one case of three", "n = int(input())\nprint(2 if n == 1 else 0)\n"),
    ("wrong", "print(0)\n"),
    ("crash", "raise SystemExit(3)\n"),
    ("exits early", "import os\nos._exit(0)\n"),
    ("syntax error", "def (:\n"),
]


def afterburner_text(code: str) -> str:
    return f"<thinking>double it</thinking>\n<solution>\n```python\n{code}```\n</solution><|im_end|>"


def test_scores_are_the_pass_rate_in_0_1_while_rewards_stay_signed(service: Service, engine: Engine) -> None:
    """afterburner's reward is negative for failing code (format -1, transition -0.5/-1);
    ``scores`` is the fraction of the tests passed, what dynamic filtering averages per prompt."""
    responses = [afterburner_text(code) for _, code in HOSTILE]
    responses += ["I cannot do this.<|im_end|>", "<|im_end|>"]
    baseline = "n = int(input())\nprint(n + n)\n"
    count = len(responses)
    data = post(service, [PROMPT] * count, responses,
                [json.dumps({"tests": STDIO, "baseline_code": baseline})] * count,
                query="preset=afterburner&objective=memory")
    assert min(data["rewards"]) < 0 and all(0.0 <= s <= 1.0 for s in data["scores"])
    assert data["scores"] == [1.0, pytest.approx(1 / 3), 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]
    assert data["scores"] == data["extra_logs"]["pass_rate"]
    assert list(data["extra_logs"]) == ["afterburner_format", "transition", "efficiency_memory", "pass_rate",
                                        "rewardkit_fault"]
    bare = [r.removesuffix("<|im_end|>") for r in responses]
    columns = {"tests": [STDIO] * count, "baseline_code": [baseline] * count}
    local = afterburner("memory", engine=engine).evaluate(bare, columns)
    for name in ("afterburner_format", "transition"):  # efficiency is measured: not exactly repeatable
        assert data["extra_logs"][name] == [r.components[name] for r in local]
    assert data["scores"] == pass_rate(engine=engine)(completions=bare, tests=columns["tests"])


def test_one_request_per_sample_as_openrlhf_sends_them(service: Service) -> None:
    """OpenRLHF posts each sample on its own, all of a rollout at once."""
    responses = [afterburner_text(code) for _, code in HOSTILE]
    label = json.dumps(STDIO)
    batch = post(service, [PROMPT] * len(responses), responses, [label] * len(responses))
    with ThreadPoolExecutor(len(responses)) as pool:
        singles = list(pool.map(lambda r: post(service, [PROMPT], [r], [label]), responses))
    assert [s["rewards"][0] for s in singles] == batch["rewards"]
    assert [s["scores"][0] for s in singles] == batch["scores"]


@pytest.mark.parametrize("label", [
    json.dumps(STDIO),  # the suite, as JSON text
    json.dumps({"tests": STDIO, "language": "python", "ignored": 1}),  # an object of columns
    {"tests": STDIO},  # an object, as a dataset may hold it
])
def test_a_label_is_a_suite_or_an_object_of_columns(service: Service, http: httpx.Client, label: Any) -> None:
    responses = ["```python\nprint(int(input()) * 2)\n```", "```python\nprint(0)\n```"]
    data = post(service, ["Double n.\n"] * 2, responses, [label, label])
    expected = http.post("/score", json={"completions": responses, "columns": {"tests": [STDIO] * 2}}).json()
    assert data["rewards"] == expected["rewards"]
    assert data["extra_logs"] == {**expected["components"], "rewardkit_fault": [0.0, 0.0]}
    assert data["scores"] == expected["components"]["pass_rate"] == [1.0, 0.0]


def test_the_token_rides_in_the_url(service: Service) -> None:
    """OpenRLHF sends no headers of its own: the service takes ``?token=`` on this route."""
    body = {"query": ["print(2)"], "labels": [{"mode": "stdio", "cases": [{"input": "", "output": "2\n"}]}]}
    assert httpx.post(f"{service.url}/openrlhf", json=body).status_code == 401
    answer = httpx.post(f"{service.url}/openrlhf", params={"token": service.token}, json=body)
    assert answer.status_code == 200 and answer.json()["scores"] == [1.0]


@pytest.mark.parametrize(("labels", "words"), [
    ([""], "--data.label_key"),  # OpenRLHF sends "" for every label when no label key is set
    (None, "--data.label_key"),
])
def test_a_missing_label_says_which_openrlhf_flag_to_set(http: httpx.Client, labels: Any, words: str) -> None:
    answer = http.post("/openrlhf", json={"query": [PROMPT + BARE], "prompts": [PROMPT], "labels": labels})
    assert answer.status_code == 400 and words in answer.json()["error"], answer.text


def test_the_fault_policy_rides_in_the_url(service: Service, http: httpx.Client) -> None:
    answer = post(service, [PROMPT], [BARE], [STDIO], query="preset=pass_rate&fault=-1")
    assert answer["rewards"] == [1.0] and answer["extra_logs"]["rewardkit_fault"] == [0.0]
    refused = http.post(f"{service.url}/openrlhf?fault=skip&token={service.token}",
                        json={"query": [PROMPT + BARE], "prompts": [PROMPT], "labels": [STDIO]})
    assert refused.status_code == 400 and "cannot drop a sample" in refused.text
