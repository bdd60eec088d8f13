"""Every code block of README.md and of the docs runs as written, against the installed wheel.

Each fenced block is one test case named after its page and opening line
(``README-L57-python``, ``sandbox-L12-bash``).  Blocks run in reading order,
the README first and then the docs pages in the order of ``mkdocs.yml``'s
nav, in ONE working directory outside the repository, so a block may use the
files an earlier one made: ``bash`` blocks with
``bash -euo pipefail`` and the virtualenv's ``bin`` first on ``PATH``,
``python`` blocks with the virtualenv's python.  Selecting one case
(``-k sandbox-L12``) runs the blocks before it first.  That directory and the
outcomes are the session's ``tutorial`` fixture (``conftest.py``):
``test_wheel.py`` checks more of the runs it shares instead of repeating them.

A block that cannot run as it stands says so on the line before its fence:

* ``<!-- readme-test: skip: REASON -->``: skipped, with the reason.
* ``<!-- readme-test: output: WHAT -->``: output shown, not commands; not run.
* ``<!-- readme-test: fragment: WHAT -->``: a piece of another tool's config;
  YAML or JSON must parse, and every ``path``/``name`` pair in it must name
  a function of the installed package (``/path/to/site-packages/`` is the
  virtualenv's; ``pkg://a.b`` is module ``a.b``, as verl reads it).
* ``<!-- readme-test: docker -->``: needs the Docker engine; runs, but is skipped
  with ``REWARDKIT_SKIP_DOCKER=1`` as the other docker tests are.
* ``<!-- readme-test: server[: COMMAND] -->``: the block talks to ``rewardkit
  serve``.  COMMAND (default: the block's own ``rewardkit serve`` lines, each
  in turn) runs in the background until ``/health`` answers, the rest of the
  block runs, then the server gets SIGINT.  The README's port 8765 becomes a
  free port in the block and on the server's command line, so a busy 8765
  cannot break the test.

:data:`KNOWN_FAILURES` marks blocks that fail because of a library defect
still being fixed: strict xfails, so the fix turns them into failures that
say to drop the entry.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml
from installed import REPO, Installed, free_port, serving

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1800)]

README = REPO / "README.md"
MKDOCS = REPO / "mkdocs.yml"
README_PORT = "8765"
MARKER = re.compile(r"<!--\s*readme-test:\s*(\w+)\s*(?::\s*(.*?))?\s*-->")
FENCE = re.compile(r"^(`{3,}|~{3,})\s*([\w+-]*)\s*$")
SERVE_LINE = re.compile(r"^(?:\w+=\S+\s+)*rewardkit\s+serve\b.*$", re.MULTILINE)
RUNNABLE = {"bash": "bash", "sh": "bash", "python": "python"}
BLOCK_TIMEOUT_S = 900
MARKERS = ("skip", "output", "fragment", "server", "docker")
SKIP_DOCKER = os.environ.get("REWARDKIT_SKIP_DOCKER") == "1"

# A unique piece of a block's text -> why it fails today (library defect; strict xfail until fixed).
KNOWN_FAILURES: dict[str, str] = {}

# A unique piece of a block's text -> what its output must show (beyond exit code 0: a command that
# ran but judged the example wrong, say a compile error, still exits 0).
EXPECTED_OUTPUT: dict[str, str] = {
    'limits=Limits(time_s=10': r"^passed 1\.0 .*\n\[<Status.PASSED: 'passed'>, <Status.PASSED: 'passed'>\]",
    "rewardkit run sum.cpp": r"status\s+passed\s+tests\s+2/2(.|\n)*instructions\s+[\d,]+",
    '"warm_pool": True': r"^passed\npassed\npassed$",
    "reward_funcs=reward.functions())": r"'rewards/quality/mean'",
    "environment_factory=factory)": r"'rewards/CodeEnv/mean'",
    "functions(weighted=True)": r"\['code_block_format', 'pass_rate', 'quality'\]",
    "rewardkit score --jsonl records.jsonl": r"total\s+0\.\d+(.|\n)*2 records: 2 scored, 0 with errors",
    "analyze(code)": r"'bare-except'",
    "--summary --fail-under": r"mean score 0\.\d+",
    "rewardkit bench --solutions": r"\| pass@1 \| 1\.000 \|",
    "rewardkit train grpo": r"2 steps; saved to out/grpo-smoke",
    "grpo.build_trainer(": r"'train_runtime'",
    'Sandbox(backend="ray"': r"^passed$",
    "curl -s": r'^\{"rewards":\[0\.95\d*\]',
    "RemoteReward(": r"^\[0\.\d+\]$",
    "rewardkit score --jsonl foreign.jsonl": r"^verl 1\.0\nopen-r1 0\.0\nhuman-eval 1\.0$",
    "--solutions samples.jsonl": r"\| pass@1 \| 0\.333 \|",
    "--base-url http://127.0.0.1:9/v1": r"^exit code 1$(.|\n)*cannot connect",  # stdout, then stderr
    "compute_score_async(": r"^\[0\.758, 0\.0(, 0\.758, 0\.0){3}\]$",
    "reward = rewards.cisq_grpo(shaping=": r"\[0\.2, 0\.3, 0\.5, 1\.0, 0\.5, 0\.5\]\n.*'cosine_scaled': 0\.9",
}


@dataclass(frozen=True)
class Block:
    """A fenced block of a page: where it opens, its language, text and marker."""

    page: str
    line: int
    language: str
    text: str
    marker: str | None = None
    argument: str = ""

    @property
    def id(self) -> str:
        return f"{self.page}-L{self.line}-{self.language or 'text'}"


def pages() -> list[Path]:
    """README.md, then the docs pages in the order of the site's nav."""
    def walk(nav: object) -> Iterator[str]:
        if isinstance(nav, str):
            yield nav
        elif isinstance(nav, dict):
            for value in nav.values():
                yield from walk(value)
        elif isinstance(nav, list):
            for value in nav:
                yield from walk(value)
    config = yaml.safe_load(MKDOCS.read_text(encoding="utf-8"))
    docs = REPO / config.get("docs_dir", "docs")
    return [README, *(docs / name for name in walk(config["nav"]))]


def readme_blocks(text: str, page: str = "README") -> list[Block]:
    """The fenced blocks of ``text`` in order (a fence closes on a fence of its kind, at least as long)."""
    blocks, lines, index = [], text.splitlines(), 0
    while index < len(lines):
        opening = FENCE.match(lines[index])
        if not opening:
            index += 1
            continue
        fence = opening.group(1)
        marked = MARKER.search(lines[index - 1]) if index else None
        end = index + 1
        while end < len(lines) and not (lines[end].startswith(fence[0] * len(fence))
                                        and not lines[end].strip(fence[0]).strip()):
            end += 1
        blocks.append(Block(page, index + 1, opening.group(2).lower(), "\n".join(lines[index + 1:end]) + "\n",
                            marked.group(1) if marked else None, (marked.group(2) or "") if marked else ""))
        index = end + 1
    return blocks


BLOCKS = [block for path in pages() for block in readme_blocks(path.read_text(encoding="utf-8"), path.stem)]


def _param(block: Block) -> object:
    reasons = [why for key, why in KNOWN_FAILURES.items() if key in block.text]
    marks = [pytest.mark.xfail(strict=True, reason=reasons[0])] if reasons else []
    if block.marker == "docker":
        marks.append(pytest.mark.docker)
    return pytest.param(block, id=block.id, marks=marks)


@dataclass
class Outcome:
    """What running a block gave: its exit code and output."""

    returncode: int
    output: str


@dataclass
class Tutorial:
    """The shared working directory and the outcome of each block run so far.

    Blocks run as on a new user's machine without a GPU: rewardkit's cache starts empty (in
    :attr:`cache`, beside the working directory) and CUDA is hidden.
    """

    venv: Installed
    folder: Path
    done: dict[str, Outcome] = field(default_factory=dict)

    @property
    def cache(self) -> Path:
        return self.folder.parent / "cache"

    @property
    def environment(self) -> dict[str, str]:
        """What the blocks' environment adds to the virtualenv's."""
        return {"REWARDKIT_CACHE_DIR": str(self.cache), "CUDA_VISIBLE_DEVICES": ""}

    def run_through(self, block: Block) -> Outcome:
        """Run every runnable block before ``block`` not run yet, in order, then ``block``."""
        for earlier in BLOCKS[:BLOCKS.index(block) + 1]:
            if earlier.id not in self.done and runnable(earlier):
                self.done[earlier.id] = self._run(earlier)
        return self.done[block.id]

    def _run(self, block: Block) -> Outcome:
        if block.marker != "server":
            if block.marker == "docker" and SKIP_DOCKER:
                return Outcome(0, "skipped: REWARDKIT_SKIP_DOCKER=1")
            return self._execute(block, block.text)
        port = str(free_port())
        text = block.text.replace(README_PORT, port)
        commands = [block.argument] if block.argument else SERVE_LINE.findall(block.text)
        assert commands, f"{block.id}: a server block needs `rewardkit serve` in it or after `server:`"
        body = SERVE_LINE.sub("", text) if not block.argument else text
        outcomes = []
        for number, command in enumerate(commands):
            started = ["bash", "-c", f"{command.partition(' #')[0].rstrip()} --port {port}"]
            with serving(started, int(port), self.folder, self.venv.env(self.environment),
                         self.folder.parent / f"serve-{block.id}-{number}.log"):
                if number == 0:  # the block's requests go to the first server; the others must start
                    outcomes.append(self._execute(block, body))
        return outcomes[0]

    def _execute(self, block: Block, text: str) -> Outcome:
        script = self.folder.parent / f"{block.id}.{'py' if RUNNABLE[block.language] == 'python' else 'sh'}"
        script.write_text(text, encoding="utf-8")
        command = ([str(self.venv.python), str(script)] if RUNNABLE[block.language] == "python"
                   else ["bash", "-euo", "pipefail", str(script)])
        try:
            done = self.venv.run(command, self.folder, timeout=BLOCK_TIMEOUT_S, extra_env=self.environment)
        except subprocess.TimeoutExpired as exc:
            return Outcome(-1, f"timed out after {BLOCK_TIMEOUT_S} s\n{exc.stdout or ''}{exc.stderr or ''}")
        return Outcome(done.returncode, done.stdout + done.stderr)


def runnable(block: Block) -> bool:
    return block.language in RUNNABLE and block.marker in (None, "server", "docker")


def _check_fragment(block: Block, venv: Installed, folder: Path) -> None:
    if block.language in ("yaml", "yml"):
        data = yaml.safe_load(block.text)
    elif block.language == "json":
        data = json.loads(block.text)
    else:
        pytest.fail(f"{block.id}: a fragment must be yaml or json")
    for path, name in _path_name_pairs(data):
        if path.startswith("pkg://"):  # verl's form for a module imported by its name
            module = path.removeprefix("pkg://")
            local = venv.site_packages.joinpath(*module.split(".")).with_suffix(".py")
        else:
            local = Path(path.replace("/path/to/site-packages", str(venv.site_packages)))
            module = ".".join(local.relative_to(venv.site_packages).with_suffix("").parts)
        assert local.is_file(), f"{block.id}: {path} is not a file of the installed package ({local})"
        probe = f"import {module} as m; assert callable(m.{name})"
        done = venv.run([str(venv.python), "-c", probe], folder)
        assert done.returncode == 0, f"{block.id}: {name} is not a function of {path}:\n{done.stderr}"


def _path_name_pairs(data: object) -> Iterator[tuple[str, str]]:
    if isinstance(data, dict):
        if isinstance(data.get("path"), str) and isinstance(data.get("name"), str):
            yield data["path"], data["name"]
        for value in data.values():
            yield from _path_name_pairs(value)
    elif isinstance(data, list):
        for value in data:
            yield from _path_name_pairs(value)


def test_every_block_is_covered() -> None:
    """Each block runs or says why not, and each known failure names exactly one block."""
    assert len(BLOCKS) >= 15
    unmarked = [b.id for b in BLOCKS if not runnable(b) and b.marker is None]
    assert not unmarked, f"blocks in a language the test cannot run need a readme-test marker: {unmarked}"
    unknown = [b.id for b in BLOCKS if b.marker is not None and b.marker not in MARKERS]
    assert not unknown, f"unknown readme-test markers: {unknown}"
    for key in [*KNOWN_FAILURES, *EXPECTED_OUTPUT]:
        matching = [b.id for b in BLOCKS if key in b.text]
        assert len(matching) == 1, f"{key!r} of KNOWN_FAILURES/EXPECTED_OUTPUT matches {matching}: update it"


@pytest.mark.parametrize("block", [_param(b) for b in BLOCKS])
def test_readme_block(block: Block, tutorial: Tutorial) -> None:
    if block.marker == "skip":
        pytest.skip(block.argument or "marked skip without a reason")
    if block.marker == "output":
        pytest.skip(f"output, not run: {block.argument}")
    if block.marker == "docker" and SKIP_DOCKER:
        pytest.skip("needs the Docker engine: REWARDKIT_SKIP_DOCKER=1")
    if block.marker == "fragment":
        _check_fragment(block, tutorial.venv, tutorial.folder)
        return
    outcome = tutorial.run_through(block)
    print(outcome.output)  # shown by `pytest -rP`
    assert outcome.returncode == 0, (
        f"{block.id} exited {outcome.returncode} in {tutorial.folder}\n--- block\n{block.text}"
        f"--- output (last 4000 characters)\n{outcome.output[-4000:]}")
    for key, pattern in EXPECTED_OUTPUT.items():
        if key in block.text:
            shown = re.search(pattern, outcome.output, re.MULTILINE)
            assert shown, f"{block.id}: its output lacks /{pattern}/:\n{outcome.output[-4000:]}"
