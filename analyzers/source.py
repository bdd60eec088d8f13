"""From whatever the caller passed to the code the tools analyse, or to the input fault instead.

Bad input never raises.  ``None`` and other non-text objects, undecodable
bytes, NUL bytes, oversized, unparsable or too deeply nested sources each
become one ``rk-input`` finding, and no tool runs on that source (it scores 0,
see :mod:`.report`).  Text is normalised first (:mod:`.normalize`).

Unless the profile sets ``honour_suppressions``, the code is treated as a
policy's: inline suppressions are erased (:mod:`.suppressions`), so are the branches
and functions the type checker skips (:mod:`.hidden_branches`), and code
passed to ``exec``/``eval`` as text is prepared too, to be analysed beside the
program (:mod:`.hidden_code`); code run in a way that cannot be read is an
input fault, reported beside every finding the tools make of the rest.
"""

from __future__ import annotations

import ast
import warnings
from dataclasses import dataclass

from .finding import INPUT_FAULT_TOOL, Finding
from .hidden_branches import reveal_hidden_branches
from .hidden_code import find_hidden_code
from .normalize import decode, normalize
from .profile import Profile
from .suppressions import erase_suppressions

MAX_HIDDEN_LEVELS = 3  # exec of code that execs code that execs code: deeper is unreadable
MAX_PAYLOADS = 16  # exec/eval payloads per source, all levels together


@dataclass(frozen=True)
class Hidden:
    """Code the program runs with ``call`` (exec, eval or a runner) at ``line``, prepared for analysis."""

    line: int
    call: str
    code: Prepared


@dataclass(frozen=True)
class Prepared:
    """Source text and its AST, and the input fault that scores it 0, if any.

    Without text, the fault replaces analysis (the source cannot be read); with
    text, the source hides code from the tools and is analysed all the same.
    ``hidden`` is the code it runs from text, to be analysed too; ``findings``
    are those of preparation itself (one per exec/eval of such code).
    """

    text: str | None
    tree: ast.Module | None
    problem: Finding | None
    hidden: tuple[Hidden, ...] = ()
    findings: tuple[Finding, ...] = ()

    def payload_count(self) -> int:
        """Hidden code at every level."""
        return sum(1 + h.code.payload_count() for h in self.hidden)


def _problem(profile: Profile, rule: str, message: str, line: int = 1) -> Prepared:
    return Prepared(None, None, profile.finding(INPUT_FAULT_TOOL, rule, message, line))


def prepare(code: object, profile: Profile) -> Prepared:
    """Decode, normalise, size-check and parse one input (and the code it hides)."""
    if isinstance(code, (bytes, bytearray, memoryview)):
        try:
            code = decode(bytes(code))
        except (SyntaxError, LookupError, UnicodeDecodeError) as exc:
            return _problem(profile, "decode-error", f"cannot decode source: {exc}")
    if not isinstance(code, str):
        return _problem(profile, "invalid-input", f"expected str or bytes, got {type(code).__name__}")
    try:
        code.encode("utf-8")
    except UnicodeEncodeError as exc:
        return _problem(profile, "decode-error", f"text is not valid Unicode: {exc.reason}")
    return _prepare_text(normalize(code), profile, 0)


def _prepare_text(text: str, profile: Profile, level: int) -> Prepared:
    tree = _parsed(text, profile)
    if isinstance(tree, Prepared):
        return tree
    nodes, depth = nodes_and_depth(tree)
    max_depth = int(profile.threshold("max_ast_depth"))
    if depth > max_depth:
        return _problem(profile, "too-deep", f"nested {depth} levels deep (limit {max_depth}); not analyzed")
    if profile.threshold("honour_suppressions"):
        return Prepared(text, tree, None)
    revealed = reveal_hidden_branches(erase_suppressions(text), nodes)
    return _with_hidden_code(revealed, tree, nodes, profile, level)


def _parsed(text: str, profile: Profile) -> ast.Module | Prepared:
    """The AST of ``text``, or the input fault that stops its analysis (NUL, size, syntax)."""
    if "\x00" in text:
        line = text.count("\n", 0, text.index("\x00")) + 1
        return _problem(profile, "syntax-error", "source contains NUL bytes", line)
    size, limit = len(text.encode("utf-8")), int(profile.threshold("max_source_bytes"))
    if size > limit:
        return _problem(profile, "source-too-large", f"source is {size} bytes (limit {limit}); not analyzed")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(text)
    except SyntaxError as exc:
        return _problem(profile, "syntax-error", f"{exc.msg}", exc.lineno or 1)
    except (ValueError, RecursionError, MemoryError) as exc:
        return _problem(profile, "too-deep", f"cannot parse: {type(exc).__name__} (nested too deep)")
    return tree


def _with_hidden_code(text: str, tree: ast.Module, nodes: list[ast.AST], profile: Profile,
                      level: int) -> Prepared:
    """The prepared module with the code it runs from text.  Code run in a way that cannot be read
    is an input fault (the source scores 0), but the module is still analysed, so that the report
    lists every other finding beside it."""
    found = find_hidden_code(nodes, int(profile.threshold("max_source_bytes")))
    faults: list[tuple[int, str]] = [(line, f"the code {what}: its quality cannot be judged")
                                     for line, what in found.unreadable]
    if found.payloads and level >= MAX_HIDDEN_LEVELS:
        faults.append((found.payloads[0].line, f"code hidden over {MAX_HIDDEN_LEVELS} levels deep"))
    hidden: list[Hidden] = []
    findings: list[Finding] = []
    for payload in found.payloads if level < MAX_HIDDEN_LEVELS else ():
        code = _prepare_text(normalize(payload.text), profile, level + 1)
        if code.problem is not None:
            faults.append((payload.line, f"{payload.call} at line {payload.line} runs code that "
                                         f"cannot be analysed: {code.problem.message}"))
        if code.text is None:
            continue
        hidden.append(Hidden(payload.line, payload.call, code))
        finding = profile.finding("rk-dynamic", "dynamic-code", f"{payload.call} runs code written as "
                                  "data (analysed too, its findings reported at this line)", payload.line)
        findings += [finding] if finding else []
    if sum(1 + h.code.payload_count() for h in hidden) > MAX_PAYLOADS:
        hidden = []
        faults.append((1, f"more than {MAX_PAYLOADS} pieces of code run from text"))
    problem = None
    if faults:
        line, message = min(faults)
        problem = profile.finding(INPUT_FAULT_TOOL, "hidden-code", message, line)
    return Prepared(text, tree, problem, tuple(hidden), tuple(findings))


def nodes_and_depth(tree: ast.AST) -> tuple[list[ast.AST], int]:
    """Every node of ``tree`` and the depth of the deepest (the root is level 1), without recursion."""
    nodes: list[ast.AST] = []
    deepest, stack = 0, [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        nodes.append(node)
        deepest = max(deepest, depth)
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))
    return nodes, deepest
