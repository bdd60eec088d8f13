"""How each language is compiled and started inside the work directory.

A language whose toolchain is missing is reported as a compile error that
names the missing tool, never as a crash.  Python is special: on the fast
path it is not exec'd at all but run in a child forked from the warm worker.
"""

from __future__ import annotations

import os
import re
import shutil
from dataclasses import dataclass

SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


@dataclass(frozen=True)
class Language:
    """How one language's solution is named, compiled, run and limited."""

    name: str
    source: str  # file name of the solution in the work dir
    compile: tuple[str, ...] = ()  # argv template; {src} and {out} are filled in
    run: tuple[str, ...] = ("./main",)
    # Runtimes that reserve huge virtual ranges cannot live under RLIMIT_AS;
    # they get a heap flag instead, and the run's cgroup holds them to the memory limit.
    address_space_limit: bool = True
    processes: int = 64
    hello: str = ""  # smallest valid program, used to measure start-up cost


LANGUAGES: dict[str, Language] = {
    "python": Language("python", "solution.py", run=("{python}", "-s", "{src}"),
                       hello="pass\n"),
    "c": Language("c", "main.c", ("gcc", "-O2", "-std=gnu11", "-o", "main", "{src}", "-lm"),
                  hello="int main(void){return 0;}\n"),
    "cpp": Language("cpp", "main.cpp", ("g++", "-O2", "-std=gnu++17", "-o", "main", "{src}"),
                    hello="int main(){return 0;}\n"),
    "java": Language("java", "Main.java",
                     ("javac", "-J-Xss16m", "-J-XX:+UseSerialGC", "-encoding", "UTF-8", "{src}"),
                     ("java", "-XX:+UseSerialGC", "-Xss64m", "-Xmx{memory_mb}m",
                      "-XX:TieredStopAtLevel=1", "-cp", ".", "{main_class}"),
                     address_space_limit=False, processes=256,
                     hello="public class Main { public static void main(String[] a) {} }\n"),
    "javascript": Language("javascript", "main.js", ("node", "--check", "{src}"),
                           ("node", "--max-old-space-size={memory_mb}", "{src}"),
                           address_space_limit=False, processes=128, hello="\n"),
    "go": Language("go", "main.go", ("go", "build", "-o", "main", "{src}"),
                   address_space_limit=False, processes=128,
                   hello="package main\nfunc main() {}\n"),
    "rust": Language("rust", "main.rs", ("rustc", "-O", "--edition", "2021", "-o", "main", "{src}"),
                     hello="fn main() {}\n"),
}

ALIASES = {"py": "python", "python3": "python", "c++": "cpp", "js": "javascript",
           "node": "javascript", "golang": "go", "rs": "rust"}

_JAVA_CLASS = re.compile(r"public\s+(?:final\s+|abstract\s+)*class\s+([A-Za-z_]\w*)")


def resolve_language(name: str) -> Language:
    """The language for a name or alias (case-insensitive); ValueError lists the known ones."""
    key = ALIASES.get(name.lower(), name.lower())
    if key not in LANGUAGES:
        known = ", ".join(sorted(LANGUAGES))
        raise ValueError(f"unknown language {name!r}; known: {known}")
    return LANGUAGES[key]


def java_main_class(source: str) -> str:
    """Name of the first public class in Java source, ``Main`` when there is none."""
    match = _JAVA_CLASS.search(source)
    return match.group(1) if match else "Main"


def source_name(language: Language, source: str) -> str:
    """File name of the solution in the work dir (Java's must match its public class)."""
    if language.name == "java":
        return java_main_class(source) + ".java"
    return language.source


def find_tool(tool: str, extra_path: str = "") -> str | None:
    """Absolute path of a tool, preferring system directories the sandbox uid can read."""
    search = SYSTEM_PATH + (os.pathsep + extra_path if extra_path else "")
    return shutil.which(tool, path=search)


def fill(template: tuple[str, ...], **values: str) -> list[str]:
    """An argv from a template, with ``{src}``, ``{out}`` and the like filled in."""
    return [part.format(**values) for part in template]
