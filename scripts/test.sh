#!/usr/bin/env bash
# The whole check, in the order that fails fastest: lint, the fast tests, the slow ones (model,
# server, browser), then the fast tests again from a copy of the repository in an empty folder, so a
# test or benchmark that reads a file outside the clone fails here.  Run after scripts/setup.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
export YOLO_OFFLINE=1 YOLO_AUTOINSTALL=false
py=$PWD/.venv/bin/python

echo "== ruff"
.venv/bin/ruff check .
echo "== fast tests"
$py -m pytest -q -m "not slow" -p no:cacheprovider
echo "== slow tests"
$py -m pytest -q -m slow -p no:cacheprovider

echo "== fast tests from a lone copy (nothing beside it)"
lone=$(mktemp -d)/istaka
trap 'rm -rf "$(dirname "$lone")"' EXIT
mkdir -p "$lone"
git ls-files -z | tar --null -T - -cf - | tar -xf - -C "$lone"
ln -s "$PWD/.venv" "$lone/.venv"  # the same installed packages; the code is the copy's
[ ! -e "$(dirname "$lone")/shared" ]
# PYTHONPATH puts the copy's packages before the editable install's, so the copy's code runs.
(cd "$lone" && PYTHONPATH="$lone" $py -m pytest -q -m "not slow" -p no:cacheprovider -x)
