#!/usr/bin/env bash
# mypy cannot follow setuptools' package-dir mapping of an editable install, so
# check a view of the installed layout (scripts/package_view.py).
set -euo pipefail
venv=${1:-.venv}
root=$(pwd)
"$root/$venv/bin/python" scripts/package_view.py .typecheck
cd .typecheck
"$root/$venv/bin/mypy" --config-file "$root/pyproject.toml" -p rewardkit
