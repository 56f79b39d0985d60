#!/usr/bin/env bash
# Installs everything istaka needs on a fresh Debian machine: Chromium (browser tests), a virtual
# environment in .venv with the pinned torch build and the project with all its extras.
# Safe to run again; it only installs what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v chromium >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  apt-get install -y -qq chromium fonts-dejavu-core >/dev/null
fi

if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip
# torch first, pinned: the versions lie on this machine's disk; an unpinned install would fetch
# another build.
.venv/bin/python -m pip install -q torch==2.14.1 torchvision==0.29.1
.venv/bin/python -m pip install -q -e '.[vision,service,dev]'
