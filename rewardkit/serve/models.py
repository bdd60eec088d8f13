"""Request and response bodies of the reward service (they make its OpenAPI document)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

# A completion as TRL hands it over: text, or chat messages whose last one is the answer.
Completion = str | list[dict[str, Any]] | None


class Strict(BaseModel):
    """A body that rejects unknown fields, so that a misspelt one is an error, not ignored."""

    model_config = ConfigDict(extra="forbid")


class ScoreRequest(Strict):
    """Completions and their dataset columns, scored with a preset."""

    preset: str = Field("cisq_grpo", description="afterburner, cisq_grpo or quality_efficiency")
    objective: str | None = Field(None, description="time, memory or integral (efficiency presets)")
    completions: list[Completion] = Field(description="text, or chat messages [{role, content}]")
    columns: dict[str, list[Any]] = Field(
        default_factory=dict,
        description="dataset columns, one entry per completion: the tests in any format of "
                    "rewardkit.sandbox.formats (tests: suite dict or JSON text; verification_info; "
                    "public_test_cases/private_test_cases; public_tests/private_tests/"
                    "generated_tests; input_output; ...), language, baseline_code, "
                    "baseline_metrics, reference_metrics")
    format: str | None = Field(None, description="the rows' test format (rewardkit.sandbox.formats."
                                                 "FORMATS); default: found from each row's columns")


class ScoreResponse(BaseModel):
    """Per completion: the weighted reward (null after an infrastructure fault), each component, why."""

    rewards: list[float | None]
    components: dict[str, list[float | None]]
    info: list[dict[str, Any]]


class RunLimits(Strict):
    """Limits of one run; each at most the service's own (its defaults)."""

    time_s: float | None = Field(None, gt=0, description="seconds per test case")
    memory_mb: int | None = Field(None, gt=0)
    output_kb: int | None = Field(None, gt=0)
    compile_time_s: float | None = Field(None, gt=0)
    file_size_mb: int | None = Field(None, gt=0)
    suite_time_s: float | None = Field(None, gt=0, description="seconds for the whole suite")


class RunRequest(Strict):
    """One program against a test suite."""

    code: str
    tests: dict[str, Any] | str = Field(description="test suite (stdio, call or script mode) or its JSON")
    language: str = "python"
    limits: RunLimits | None = None
    repeats: int | None = Field(None, ge=1, le=10, description="runs of a passing program (medians)")


class AnalyzeRequest(Strict):
    """Sources for static quality analysis."""

    codes: list[str]
    profile: dict[str, Any] | None = Field(None, description="profile sections merged over the defaults")


class AnalyzeResponse(BaseModel):
    """``QualityReport.to_dict()`` of each source, in order."""

    reports: list[dict[str, Any]]


class PresetResponse(BaseModel):
    """A preset's components and weights, in order."""

    preset: str
    objective: str | None
    name: str
    components: dict[str, float]


class OpenRLHFRequest(BaseModel):
    """OpenRLHF's remote reward payload (other fields it may send are ignored)."""

    query: list[str] = Field(description="prompt followed by the response, decoded with special tokens")
    prompts: list[str] | None = None
    labels: list[Any] | None = Field(
        None, description="the --data.label_key column: test suite, or an object of columns with 'tests'")


class OpenRLHFResponse(BaseModel):
    """What OpenRLHF reads, one number per sample: the reward, the pass rate in [0, 1] (for its
    dynamic filtering) and each component (logged)."""

    rewards: list[float]
    scores: list[float]
    extra_logs: dict[str, list[float]]


class ErrorResponse(BaseModel):
    """Every error: the status and a message saying what went wrong."""

    error: str
    status: int
    details: list[dict[str, Any]] | None = None
