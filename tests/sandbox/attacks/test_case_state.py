"""State kept between the cases of one stdio job, in the files of its work dir.

The cases of a stdio job run one after the other in the same work dir, beside
the program the build made.  A solution that caches its answer there, under a
name the build's own files have (a ``.class`` file, its source, its binary), or
that rewrites its own program, would do its work once and skip it in every
later case.  Each program here prints ``miss`` when it finds no cache and
``hit`` when it does, and leaves a cache for the next case; every case expects
``miss``, so a cache that reaches the second case fails the suite.  Only what
the build produced may be there for the next case, unchanged.

Every language runs on the local backend; the docker image and Ray run Python
only (the image has no other toolchain, and Ray runs the local worker).
"""

from __future__ import annotations

import pytest

from rewardkit.sandbox import Sandbox, Status, TestSuite

from . import BACKENDS

TWICE = TestSuite.from_dict({"mode": "stdio", "cases": [{"input": "", "output": "miss\n"}] * 2})

# Each program: on a cache, print "hit"; otherwise leave one and print "miss".
CACHES = {
    # a name the build's files have in Java (*.class), kept for every language
    "python-class-file": ("python", """
import os
if os.path.exists('Cache.class'):
    print('hit')
else:
    open('Cache.class', 'w').write('answer')
    print('miss')
"""),
    # the program rewrites its own source, which the next case runs
    "python-own-source": ("python", """
import os
source = open(__file__).read()
open(__file__ + '.new', 'w').write("print('hit')\\n")
os.replace(__file__ + '.new', __file__)
print('miss')
"""),
    "c-source": ("c", r"""
#include <stdio.h>
int main(void) {
    FILE *f = fopen("main.c", "r");
    char line[64] = "";
    if (f && fgets(line, sizeof line, f) && line[0] == 'h') { puts("hit"); return 0; }
    f = fopen("main.c.new", "w");
    fputs("hit\n", f);
    fclose(f);
    rename("main.c.new", "main.c");
    puts("miss");
    return 0;
}
"""),
    # the binary replaced by a copy of itself with the answer appended
    "cpp-own-binary": ("cpp", r"""
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <sys/stat.h>
int main() {
    std::ifstream in("main", std::ios::binary);
    std::string self((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (self.size() >= 6 && self.compare(self.size() - 6, 6, "CACHED") == 0) { std::puts("hit"); return 0; }
    std::ofstream out("main.new", std::ios::binary);
    out << self << "CACHED";
    out.close();
    chmod("main.new", 0755);
    std::rename("main.new", "main");
    std::puts("miss");
    return 0;
}
"""),
    "java-inner-class-name": ("java", """
import java.nio.file.*;
public class Main {
    public static void main(String[] args) throws Exception {
        Path cache = Paths.get("Main$Cache.class");
        if (Files.exists(cache)) { System.out.println("hit"); return; }
        Files.write(cache, "answer".getBytes());
        System.out.println("miss");
    }
}
"""),
    "go-source": ("go", """
package main

import (
\t"fmt"
\t"os"
)

func main() {
\tif data, err := os.ReadFile("main.go"); err == nil && string(data) == "hit" {
\t\tfmt.Println("hit")
\t\treturn
\t}
\tos.WriteFile("main.go.new", []byte("hit"), 0o644)
\tos.Rename("main.go.new", "main.go")
\tfmt.Println("miss")
}
"""),
    "rust-source": ("rust", """
use std::fs;
fn main() {
    if fs::read_to_string("main.rs").map(|s| s == "hit").unwrap_or(false) {
        println!("hit");
        return;
    }
    fs::write("main.rs.new", "hit").unwrap();
    fs::rename("main.rs.new", "main.rs").unwrap();
    println!("miss");
}
"""),
    # the program is its source: the next case runs what this one wrote
    "javascript-own-source": ("javascript", """
const fs = require('fs');
fs.writeFileSync('main.js.new', "console.log('hit');\\n");
fs.renameSync('main.js.new', 'main.js');
console.log('miss');
"""),
}


@pytest.mark.parametrize("attack", sorted(CACHES))
def test_no_case_finds_what_an_earlier_case_left(local_sandbox: Sandbox, attack: str) -> None:
    """Every language, locally: a cache in a kept name, or a rewritten program, is gone for the
    second case."""
    language, code = CACHES[attack]
    result = local_sandbox.run(code, TWICE, language=language)
    if result.status == Status.COMPILE_ERROR and "not installed" in result.feedback:
        pytest.skip(f"{language} toolchain missing: {result.feedback}")
    assert result.passed, f"the second case found the first one's cache: {result.feedback}"


@pytest.mark.parametrize("backend_sandbox", [b for b in BACKENDS if b != "local"], indirect=True)
@pytest.mark.parametrize("attack", ["python-class-file", "python-own-source"])
def test_no_case_finds_what_an_earlier_case_left_on_every_backend(backend_sandbox: Sandbox,
                                                                   attack: str) -> None:
    """The same in a container (the run's uid is the worker's there) and on Ray."""
    _, code = CACHES[attack]
    result = backend_sandbox.run(code, TWICE)
    assert result.passed, f"the second case found the first one's cache: {result.feedback}"


# The run's uid owns its work dir in a container: it can hide a cache in a folder it made
# unreadable, and give the folder back its mode in the next case.
HIDDEN_FOLDER = """
import os
if os.path.isdir('vault'):
    os.chmod('vault', 0o700)
    os.chmod('vault/inner', 0o700)
    print('hit' if os.path.exists('vault/inner/answer') else 'miss')
else:
    os.makedirs('vault/inner')
    open('vault/inner/answer', 'w').write('42')
    os.chmod('vault/inner', 0)
    os.chmod('vault', 0)
    print('miss')
"""


@pytest.mark.parametrize("backend_sandbox", BACKENDS, indirect=True)
def test_a_folder_made_unreadable_is_removed_too(backend_sandbox: Sandbox) -> None:
    """A cache in a folder of mode 000 (and one inside it) does not outlive its case."""
    result = backend_sandbox.run(HIDDEN_FOLDER, TWICE)
    assert result.passed, f"the second case found the first one's cache: {result.feedback}"
