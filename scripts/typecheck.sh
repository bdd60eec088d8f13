#!/usr/bin/env bash
# mypy cannot follow setuptools' package-dir mapping of an editable install, so
# build a view of the installed layout (rewardkit/, rewardkit/sandbox/, ...)
# out of symlinks and check that.
set -euo pipefail
venv=${1:-.venv}
root=$(pwd)
view=.typecheck/rewardkit
rm -rf .typecheck
mkdir -p "$view"
for entry in rewardkit/*; do ln -s "$root/$entry" "$view/"; done
for part in sandbox analyzers trainers benchmarks; do ln -s "$root/$part" "$view/$part"; done
cd .typecheck
"$root/$venv/bin/mypy" --config-file "$root/pyproject.toml" -p rewardkit
