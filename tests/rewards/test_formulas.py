"""Every formula of SPEC §4.1-4.4 against hand-computed values."""

from __future__ import annotations

import doctest
import math

import pytest

from rewardkit.analyzers import report
from rewardkit.analyzers.finding import Finding
from rewardkit.rewards import extract, formulas
from rewardkit.sandbox.runtime.languages import ALIASES, LANGUAGES, resolve_language


def test_docstring_examples_hold() -> None:
    for module in (formulas, extract, report):
        failures, _ = doctest.testmod(module)
        assert failures == 0


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("<thinking>t</thinking><solution>s</solution>", 1.0),
        ("  \n<thinking>\nplan\n</thinking>\n\n<solution>\n```python\nx\n```\n</solution>\n ", 1.0),
        ("<solution>s</solution>", -1.0),
        ("<thinking>t</thinking>", -1.0),
        ("intro <thinking>t</thinking><solution>s</solution>", -1.0),
        ("<thinking>t</thinking><solution>s</solution> outro", -1.0),
        ("<solution>s</solution><thinking>t</thinking>", -1.0),
        ("<thinking>a<thinking>b</thinking></thinking><solution>s</solution>", -1.0),
        ("<thinking>a</thinking>b</thinking><solution>s</solution>", -1.0),
        ("<thinking>t</thinking><solution>a</solution></solution>", -1.0),
        ("<thinking>t<solution>x</solution></thinking><solution>s</solution>", -1.0),
        ("", -1.0),
    ],
)
def test_afterburner_format(text: str, expected: float) -> None:
    assert formulas.afterburner_format(text) == expected


@pytest.mark.parametrize(
    ("text", "penalty", "expected"),
    [
        ("```python\nprint(1)\n```", 0.0, 1.0),
        ("Here:\n```py\nprint(1)\n```\nDone.", 0.0, 1.0),
        ("```java\nclass A {}\n```", 0.0, 0.0),
        ("print(1)", 0.0, 0.0),
        ("```python\na\n```\n```python\nb\n```", -0.3, -0.3),
        ("```python\nprint(1)\n", -0.3, -0.3),
        ("```python\nprint(1)\n", 0.0, 0.0),
    ],
)
def test_code_block_format(text: str, penalty: float, expected: float) -> None:
    assert formulas.code_block_format(text, "python", penalty) == expected


def test_transition_and_rlef_tables() -> None:
    assert [formulas.transition(a, b) for a, b in
            [(False, True), (True, True), (False, False), (True, False)]] == [1.0, 0.5, -0.5, -1.0]
    assert [formulas.rlef(p, v) for p, v in [(True, True), (False, True), (False, False)]] == \
        [1.0, -1.0, -1.2]


def test_an_invalid_answer_never_earns_more_than_a_wrong_one() -> None:
    # RLEF's -0.2 is for invalid code at any turn, the final one included: a one-turn answer
    # with no code must not beat a wrong program, or a policy learns to answer nothing
    assert formulas.rlef(False, False) < formulas.rlef(False, True)
    assert formulas.rlef(False, False) == formulas.RLEF_INVALID + formulas.rlef(False, True)


def test_efficiency_gain_by_hand() -> None:
    # 1.0 s -> 0.25 s: gain 0.75, tanh(0.75)
    assert formulas.efficiency_gain(1.0, 0.25) == pytest.approx(math.tanh(0.75), abs=1e-9)
    # slower candidate: negative gain
    assert formulas.efficiency_gain(1.0, 1.5) == pytest.approx(math.tanh(-0.5), abs=1e-9)
    # memory in KiB, clipped at 1 GiB: 2 GiB baseline counts as 1 GiB
    gain = (1_048_576 - 524_288) / (1_048_576 + 1e-9)
    assert formulas.efficiency_gain(2_097_152, 524_288, "memory") == pytest.approx(math.tanh(gain))
    # fix: 90 s upper bound is seconds, so a 0.2 s baseline is not saturated
    assert formulas.efficiency_gain(0.2, 0.1) == pytest.approx(math.tanh(0.5), abs=1e-6)
    # noise floor
    assert formulas.efficiency_gain(1.0, 0.96, noise_floor=0.05) == 0.0
    assert formulas.efficiency_gain(1.0, 0.94, noise_floor=0.05) == pytest.approx(math.tanh(0.06))
    assert formulas.efficiency_gain(0.0, 0.0) == 0.0


def test_percentile_rank_by_hand() -> None:
    refs = [3.0, 1.0, 2.0, 2.0]  # sorted: 1, 2, 2, 3
    assert formulas.percentile_rank(2.0, refs) == pytest.approx(1 - 1 / 4)  # ties count as beaten
    assert formulas.percentile_rank(2.5, refs) == pytest.approx(1 - 3 / 4)
    assert formulas.percentile_rank(1.0, refs) == 1.0
    assert formulas.percentile_rank(9.0, refs) == 0.0
    with pytest.raises(ValueError):
        formulas.percentile_rank(1.0, [])


def test_quality_score_with_paper_weights() -> None:
    # two low (1.0 each) + one high (5.0) + one info (0.5): W = 7.5
    assert formulas.quality_score(2 * 1.0 + 5.0 + 0.5) == pytest.approx(1 / 8.5)


def test_reports_are_scored_by_the_quality_formula() -> None:
    """One ``1 / (1 + W)``: the formula is the function the analyzers score reports with."""
    assert formulas.quality_score is report.quality_score
    findings = [Finding("pylint", "W0611", "unused import", 1, "high", "maintainability")] * 2
    scored = report.QualityReport.from_findings(findings)
    assert scored.score == formulas.quality_score(scored.weighted_count) == pytest.approx(1 / 11)


@pytest.mark.parametrize(
    ("text", "language", "expected"),
    [
        ("<thinking>x</thinking><solution>\n```python\nA\n```\n```python\nB\n```\n</solution>",
         "python", "B"),
        ("<thinking>x</thinking><solution>\nprint(2)\n</solution>", "python", "print(2)"),
        ("```python\nA\n```\ntext\n```python\nB\n```", "python", "B"),
        ("```python\nA\n```\n```text\nnot code\n```", "python", "A"),
        ("```cpp\nint main(){}\n```\n```python\nP\n```", "cpp", "int main(){}"),
        ("print(3)", "python", "print(3)"),
        ("```text\nonly prose\n```", "python", None),
        ("   \n", "python", None),
    ],
)
def test_code_extraction(text: str, language: str, expected: str | None) -> None:
    assert extract.extract_code(text, language) == expected


LANGUAGE_NAMES = sorted({*LANGUAGES, *ALIASES})


@pytest.mark.parametrize("tag", [*LANGUAGE_NAMES, "C++", "Python"])
def test_a_fence_tag_and_a_language_name_resolve_alike(tag: str) -> None:
    """A block tagged ``tag`` is the code of exactly the languages the sandbox takes ``tag`` for."""
    text = f"```{tag}\nx = 1\n```"
    for name in [*LANGUAGE_NAMES, *(n.upper() for n in LANGUAGE_NAMES)]:
        same = resolve_language(tag).name == resolve_language(name).name
        assert (extract.extract_code(text, name) == "x = 1") == same, (tag, name)
        assert formulas.code_block_format(text, name) == (1.0 if same else 0.0), (tag, name)


@pytest.mark.parametrize(
    ("completion", "problem"),
    [
        (None, "None"),
        (42, "int"),
        (b"\xff\xfe", "UTF-8"),
        ("x" * 1_000_001, "longer"),
        ("a\x00b", "NUL"),
        ([], "empty"),
        ([{"role": "assistant"}], "content"),
    ],
)
def test_bad_completions_have_reasons(completion: object, problem: str) -> None:
    text = extract.completion_text(completion)
    assert text.value is None and text.problem is not None and problem in text.problem


def test_conversational_completion_text() -> None:
    text = extract.completion_text([{"role": "assistant", "content": "hi"}])
    assert text.value == "hi"
