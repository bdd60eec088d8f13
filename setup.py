"""Which packages the wheel holds: everything under the five folders of the one namespace.

The repository's top-level folders are subpackages of ``rewardkit`` (SPEC §2):
each folder below them is found here, never listed by hand, so a new
subpackage (``rewardkit.serve``, say) cannot be left out of the wheel.  The
rest of the metadata is in ``pyproject.toml``.
"""

from setuptools import find_namespace_packages, setup

ROOTS = {"rewardkit": "rewardkit", "rewardkit.sandbox": "sandbox",
         "rewardkit.analyzers": "analyzers", "rewardkit.trainers": "trainers",
         "rewardkit.benchmarks": "benchmarks"}
NOT_SHIPPED = ["perf", "perf.*"]  # benchmarks/perf: the scripts `make bench` runs from a checkout


def packages() -> list[str]:
    """Each root and every folder below it, as dotted package names."""
    found = []
    for name, folder in ROOTS.items():
        below = find_namespace_packages(where=folder, exclude=["*__pycache__*", *NOT_SHIPPED])
        found += [name, *(f"{name}.{sub}" for sub in below)]
    return found


setup(package_dir=ROOTS, packages=packages())
