"""A program cannot raise its quality by hiding its code from the tools in exec/eval and kin."""

from __future__ import annotations

import base64
import codecs
import zlib

import pytest

from rewardkit.analyzers import QualityReport, analyze_many

PLAIN = (
    "import subprocess\n"
    "LIMIT: int = 'ten'\n"
    "\n"
    "\n"
    "def run(cmd, a, b, c, d, e):\n"
    "    try:\n"
    "        handle = open(cmd)\n"
    "    except:\n"
    "        pass\n"
    "    return subprocess.call('ls ' + cmd, shell=True)\n"
)
HALF = len(PLAIN) // 2


def _hex(text: str) -> str:
    return text.encode().hex()


# Every variant runs PLAIN; the ones the analysis can read are analysed, the others score 0.
READABLE = {
    "exec of a str": f"exec({PLAIN!r})\n",
    "exec of bytes": f"exec({PLAIN.encode()!r})\n",
    "exec of a concatenation": f"exec({PLAIN[:HALF]!r} + {PLAIN[HALF:]!r})\n",
    "exec of compile": f"exec(compile({PLAIN!r}, '<s>', 'exec'))\n",
    "eval of compile": f"eval(compile({PLAIN!r}, '<s>', 'exec'))\n",
    "compiled through a name": f"CODE = compile({PLAIN!r}, '<s>', 'exec')\nexec(CODE)\n",
    "a name bound to the text": f"SRC = {PLAIN!r}\nexec(SRC)\n",
    "builtins.exec": f"import builtins\nbuiltins.exec({PLAIN!r})\n",
    "base64": f"import base64\nexec(base64.b64decode({base64.b64encode(PLAIN.encode())!r}))\n",
    "codecs rot13": f"import codecs\nexec(codecs.decode({codecs.encode(PLAIN, 'rot13')!r}, 'rot13'))\n",
    "zlib": f"import zlib\nexec(zlib.decompress({zlib.compress(PLAIN.encode())!r}))\n",
    "hex": f"exec(bytes.fromhex({_hex(PLAIN)!r}).decode())\n",
    "chr codes": f"exec(''.join(chr(c) for c in {[ord(c) for c in PLAIN]!r}))\n",
    "reversed twice": f"exec({PLAIN[::-1]!r}[::-1])\n",
    "nested exec": f"exec({f'exec({PLAIN!r})'!r})\n",
}
UNREADABLE = {
    "getattr(builtins, 'exec')": f"import builtins\ngetattr(builtins, 'exec')({PLAIN!r})\n",
    "getattr with a built name": f"import builtins\ngetattr(builtins, 'ex' + 'ec')({PLAIN!r})\n",
    "__builtins__": f"__builtins__.exec({PLAIN!r})\n",
    "__import__": f"__import__('builtins').exec({PLAIN!r})\n",
    "importlib": f"import importlib\nimportlib.import_module('builtins').exec({PLAIN!r})\n",
    "an alias of exec": f"run_code = exec\nrun_code({PLAIN!r})\n",
    "globals()": f"globals()['__builtins__'].exec({PLAIN!r})\n",
    "a subscript by name": f"import builtins\nvars(builtins)['exec']({PLAIN!r})\n",
    "exec through a function": f"def go(src):\n    exec(src)\n\n\ngo({PLAIN!r})\n",
    "text computed at run time": f"exec(''.join(sorted({PLAIN!r}, key=lambda c: 0)))\n",
    "types.FunctionType": f"import types\ntypes.FunctionType(compile({PLAIN!r}, '<s>', 'exec'), {{}})()\n",
    "a new interpreter": f"import subprocess, sys\nsubprocess.run([sys.executable, '-c', {PLAIN!r}])\n",
    "python on the command line": f"import subprocess\nsubprocess.run(['python3', '-c', {PLAIN!r}])\n",
    "python through a shell": f"import os\nCMD = 'python3 -c ' + {PLAIN!r}\nos.system(CMD)\n",
    "a module written to import": f"with open('helper.py', 'w') as out:\n    out.write({PLAIN!r})\n"
                                  "import helper\n",
    "pickle": "import pickle\npickle.loads(b'c__builtin__\\nexec\\n(Vprint(1)\\ntR.')\n",
    "code object escape": f"(lambda: 0).__globals__['__builtins__']['exec']({PLAIN!r})\n",
    "code hidden too deep": f"exec({'exec(' + repr('exec(' + repr(f'exec({PLAIN!r})') + ')') + ')'!r})\n",
    "code that does not parse": "exec('def broken(:')\n",
}


def _rules(report: QualityReport) -> set[str]:
    return {f"{f.tool}:{f.rule}" for f in report.findings}


@pytest.fixture(scope="module")
def plain() -> QualityReport:
    (report,) = analyze_many([PLAIN], workers=1)
    assert {"bandit:B602", "mypy:assignment", "rk-reliability:bare-except"} <= _rules(report)
    return report


@pytest.mark.usefixtures("fresh_cache")
def test_a_wrapped_program_never_scores_higher_than_the_plain_one(plain: QualityReport) -> None:
    variants = {**READABLE, **UNREADABLE}
    for name, report in zip(variants, analyze_many(list(variants.values()), workers=2), strict=True):
        assert report.errors == (), (name, report.errors)
        assert report.score < plain.score, (name, report.score, plain.score, _rules(report))
        if name in UNREADABLE:
            faults = {r for r in _rules(report) if r.startswith("rk-input:")}
            assert report.score == 0.0 and faults == {"rk-input:hidden-code"}, (name, report)


@pytest.mark.usefixtures("fresh_cache")
def test_readable_hidden_code_is_analysed_and_reported_at_the_call(plain: QualityReport) -> None:
    wrapped = "X = 1\n" + READABLE["exec of a str"]
    (report,) = analyze_many([wrapped], workers=1)
    hidden = [f for f in report.findings if f.line == 2]
    assert {f"{f.tool}:{f.rule}" for f in hidden} >= _rules(plain) | {"rk-dynamic:dynamic-code"}
    b602 = next(f for f in hidden if f.rule == "B602")
    assert "in the code exec runs at line 2, its line 10" in b602.message


@pytest.mark.usefixtures("fresh_cache")
def test_ordinary_code_is_not_taken_for_hidden_code() -> None:
    ordinary = (
        "import re\n"
        "PATTERN = re.compile(r'\\d+')\n"
        "\n"
        "\n"
        "def evaluate(tokens: list[str]) -> int:\n"
        '    """Sum the numbers."""\n'
        "    return sum(int(t) for t in tokens if PATTERN.fullmatch(t))\n"
        "\n"
        "\n"
        "def eval(text: str) -> int:  # our own eval, not the builtin\n"
        '    """Evaluate a sum."""\n'
        "    return evaluate(text.split('+'))\n"
        "\n"
        "\n"
        "print(eval(input()), getattr(PATTERN, 'pattern'))\n"
    )
    (report,) = analyze_many([ordinary], workers=1)
    assert not {"rk-input:hidden-code", "rk-dynamic:dynamic-code"} & _rules(report), report


@pytest.mark.usefixtures("fresh_cache")
def test_reviewed_code_may_run_code() -> None:
    """With suppressions honoured (reviewed code: a test harness), dynamic code is its own business."""
    harness = 'def run(source: str) -> None:\n    """Run it."""\n    exec(source)  # nosec B102\n'
    trusted, untrusted = (analyze_many([harness], {"thresholds": {"honour_suppressions": honour}},
                                       workers=1)[0] for honour in (True, False))
    assert "rk-input:hidden-code" not in _rules(trusted) and trusted.score > 0
    assert {"rk-input:hidden-code", "bandit:B102"} <= _rules(untrusted) and untrusted.score == 0.0
