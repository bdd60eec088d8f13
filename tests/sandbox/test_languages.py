"""stdio mode in every language; a missing toolchain is a compile error that names it."""

from __future__ import annotations

import pytest

from rewardkit.sandbox import LANGUAGES, Sandbox, Status, TestSuite
from rewardkit.sandbox.runtime.languages import find_tool

SUITE = TestSuite.from_dict({"mode": "stdio", "cases": [
    {"input": "2 3\n", "output": "5\n"}, {"input": "40 2\n", "output": "42\n"}]})

SOURCES = {
    "python": "a, b = map(int, input().split())\nprint(a + b)\n",
    "c": '#include <stdio.h>\nint main(void){long a,b;scanf("%ld %ld",&a,&b);'
         'printf("%ld\\n",a+b);return 0;}\n',
    "cpp": "#include <iostream>\nint main(){long a,b;std::cin>>a>>b;std::cout<<a+b<<\"\\n\";}\n",
    "java": "import java.util.*;\npublic class Solution { public static void main(String[] x) {"
            " Scanner s = new Scanner(System.in); System.out.println(s.nextLong() + s.nextLong());"
            " } }\n",
    "javascript": "const [a, b] = require('fs').readFileSync(0, 'utf8').trim().split(/\\s+/)"
                  ".map(Number);\nconsole.log(a + b);\n",
    "go": 'package main\nimport "fmt"\nfunc main() { var a, b int; fmt.Scan(&a, &b);'
          ' fmt.Println(a + b) }\n',
    "rust": "use std::io::Read;\nfn main() { let mut s = String::new();"
            " std::io::stdin().read_to_string(&mut s).unwrap();"
            " let v: Vec<i64> = s.split_whitespace().map(|x| x.parse().unwrap()).collect();"
            ' println!("{}", v[0] + v[1]); }\n',
}


def test_every_language_has_a_source() -> None:
    assert set(SOURCES) == set(LANGUAGES)


@pytest.mark.parametrize("language", sorted(SOURCES))
def test_language_runs_or_names_its_missing_toolchain(sandbox: Sandbox, language: str) -> None:
    spec = LANGUAGES[language]
    tools = [t for t in (spec.compile[:1] + spec.run[:1]) if not t.startswith(("./", "{"))]
    missing = [t for t in tools if find_tool(t) is None]
    result = sandbox.run(SOURCES[language], SUITE, language=language)
    if missing:
        assert result.status == Status.COMPILE_ERROR
        assert missing[0] in result.feedback
    else:
        assert result.status == Status.PASSED, result.feedback
        assert result.time_s >= 0 and result.peak_memory_kb > 0


@pytest.mark.parametrize("language", ["c", "cpp", "java", "rust", "go"])
def test_compile_errors_are_reported(sandbox: Sandbox, language: str) -> None:
    result = sandbox.run("this is not a program {", SUITE, language=language)
    assert result.status == Status.COMPILE_ERROR
    assert result.tests_passed == 0 and result.feedback.startswith("Compile error")


def test_compiled_wrong_answer_and_crash(sandbox: Sandbox) -> None:
    if find_tool("gcc") is None:
        pytest.fail("gcc is part of the machine image and must be present")
    wrong = sandbox.run("#include <stdio.h>\nint main(void){puts(\"5\");return 0;}\n", SUITE, "c")
    assert (wrong.status, wrong.tests_passed) == (Status.WRONG_ANSWER, 1)
    crash = sandbox.run("int main(void){int *p = 0; return *p;}\n", SUITE, "c")
    assert crash.status == Status.RUNTIME_ERROR and "signal 11" in crash.feedback
