#!/usr/bin/env bash
# Makes the virtual environment .venv for istaka.  Safe to run again: it only adds what is missing.
#
#   bash scripts/setup.sh read   reading photos and serving (ONNX Runtime, OpenCV headless, FastAPI):
#                                what `istaka scan`, `live` and `serve` need; no torch
#   bash scripts/setup.sh        everything: the above, OpenVINO (--backend openvino), training and
#                                export (the pinned torch build, ultralytics), the development
#                                tools, and the Debian packages the tests use (Chromium,
#                                redis-server) when run as root
set -euo pipefail
cd "$(dirname "$0")/.."
want=${1:-all}
case "$want" in
  read | all) ;;
  *) echo "usage: bash scripts/setup.sh [read|all]" >&2; exit 2 ;;
esac

if [ "$want" = all ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  need=()
  command -v chromium >/dev/null 2>&1 || need+=(chromium fonts-dejavu-core)
  command -v redis-server >/dev/null 2>&1 || need+=(redis-server)
  # certutil: the HTTPS browser test trusts the generated local authority through an NSS database
  command -v certutil >/dev/null 2>&1 || need+=(libnss3-tools)
  if [ ${#need[@]} -gt 0 ]; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null
    apt-get install -y -qq "${need[@]}" >/dev/null
  fi
fi

if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
pip=(.venv/bin/python -m pip install -q --disable-pip-version-check)
if [ "$want" = read ]; then
  "${pip[@]}" -e '.[read]'
  exit 0
fi
# torch first, pinned: the versions lie on this machine's disk; an unpinned install would fetch
# another build.
"${pip[@]}" torch==2.14.1 torchvision==0.29.1
"${pip[@]}" -e '.[read,openvino,train,dev]'
# ultralytics without its requirements: they name opencv-python, a second OpenCV beside the headless
# one; what else it needs is in the train extra.
"${pip[@]}" --no-deps ultralytics==8.4.190
