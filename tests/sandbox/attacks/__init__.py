"""The attack corpus: programs a policy under RL could write to look cheaper than it is.

Every attack here is a program that does the same work as an honest one but
hides part of it from the sandbox's meters, keeps state for a later run to
find, or reads what it is judged by.  The programs themselves are data, in
:mod:`.corpus`; the test modules run each one beside its honest twin and
assert that the hiding variant either fails or measures like the honest one
(SPEC §4.6, §6; issue 12).
"""

BACKENDS = ("local", "docker-fresh", "docker-warm", "ray")
"""The backends the corpus runs on (see ``conftest.py`` for how each is started)."""
