#!/usr/bin/env bash
# Train istaka configs side by side on a lent GPU machine, as one prepared run.
#
#   bash scripts/gpu_train.sh models/tile_detector.yaml models/tile_classifier.yaml
#
# Made for the workplace's `device` machines (one H200, 16 cores, no network, its own python3 with
# torch but without ultralytics): wheels in .whl/ (ultralytics and ultralytics-thop, fetched here
# with `pip download`) are installed to /tmp/site first, and datasets/build/real travels with the
# run (built from the committed datasets/rummikub-real; the device copies only tracked files).  Anywhere else the script runs as it is
# (PY=.venv/bin/python DEVICE=cpu for a rehearsal with tiny configs).
#
# Steps: a preflight (skipped with PREFLIGHT=0; CUDA, imports, one epoch of each task on a few real photos: fails in seconds,
# not after minutes); then each config runs `istaka train CONFIG --device $DEVICE --workers
# $WORKERS` in the background, with its log; every run is stopped at $DEADLINE seconds after the
# start, and a run stopped early ships its last saved epoch (said in the log).  The shipped
# weights, results.csv and logs land in $OUT (default runs/gpu).
set -u
cd "$(dirname "$0")/.."
START=$(date +%s)
PY=${PY:-python3}
DEVICE=${DEVICE:-0}
WORKERS=${WORKERS:-8}
DEADLINE=${DEADLINE:-530}
OUT=${OUT:-runs/gpu}
mkdir -p "$OUT"
export YOLO_OFFLINE=1 YOLO_AUTOINSTALL=false PYTHONUNBUFFERED=1
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
say() { echo "[gpu_train +$(($(date +%s) - START)) s] $*"; }

if compgen -G ".whl/*.whl" >/dev/null; then
    $PY -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
        --target /tmp/site .whl/*.whl || exit 1
    export PYTHONPATH="/tmp/site:$PYTHONPATH"
fi
if ! $PY -c "import polars" 2>/dev/null; then
    # ultralytics imports polars only to copy results.csv into each checkpoint's metadata, inside
    # a try that returns {} on failure; the machine's image has no polars and its wheels are too
    # big to carry, so an empty module stands in (checkpoints then carry no train_results).
    mkdir -p /tmp/site/polars && : >/tmp/site/polars/__init__.py
    export PYTHONPATH="/tmp/site:$PYTHONPATH"
    say "polars: empty stand-in module (checkpoint metadata only)"
fi

if [ "${PREFLIGHT:-1}" = 0 ]; then
    say "preflight skipped (PREFLIGHT=0)"
else
say "preflight"
$PY - "$DEVICE" <<'EOF' || { say "preflight failed"; exit 1; }
import sys, tempfile
from pathlib import Path
import torch, ultralytics, yaml
from vision.training import crops
from vision.training.train import TrainConfig, train, REPO_ROOT

device = sys.argv[1]
print("torch", torch.__version__, "cuda", torch.cuda.is_available(),
      torch.cuda.get_device_name(0) if torch.cuda.is_available() else "-",
      "ultralytics", ultralytics.__version__, flush=True)
real = REPO_ROOT / "datasets" / "build" / "real"
tmp = Path(tempfile.mkdtemp(prefix="gpu_preflight_"))
train_images = sorted((real / "images" / "train").iterdir())[:16]
val_images = sorted((real / "images" / "val").iterdir())[:8]
(tmp / "train.txt").write_text("".join(f"{p}\n" for p in train_images))
(tmp / "val.txt").write_text("".join(f"{p}\n" for p in val_images))
(tmp / "data.yaml").write_text(
    yaml.safe_dump({"path": str(tmp), "train": str(tmp / "train.txt"), "val": str(tmp / "val.txt"),
                    "names": yaml.safe_load((real / "data.yaml").read_text())["names"]})
)
for split, images in (("train", train_images), ("val", val_images)):
    crops.export_crops(images, tmp / "crops" / split, size=32)
common = {"epochs": 1, "device": device, "workers": 2, "batch": 8}
for task, model, data, imgsz in (
    ("detect", "yolo11n.yaml", tmp / "data.yaml", 256),
    ("classify", "yolo11n-cls.yaml", tmp / "crops", 32),
):
    config = TrainConfig(name=f"preflight_{task}", task=task, model=model, data=str(data),
                         output=tmp / f"{task}.pt",
                         train={**common, "imgsz": imgsz, "single_cls": task == "detect"})
    print(task, "->", train(config), flush=True)
EOF
fi
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,memory.total --format=csv,noheader

names=()
pids=()
for config in "$@"; do
    name=$($PY -c "import sys; from vision.training.train import TrainConfig; print(TrainConfig.load(sys.argv[1]).name)" "$config")
    left=$((DEADLINE - ($(date +%s) - START)))
    say "start $name ($config), stopped at the latest in $left s"
    timeout -s INT -k 20 "$left" $PY -m istaka train "$config" --device "$DEVICE" --workers "$WORKERS" \
        >"$OUT/$name.log" 2>&1 &
    names+=("$name")
    pids+=($!)
done
for i in "${!pids[@]}"; do
    wait "${pids[$i]}"
    say "${names[$i]} exited with $?"
done

for config in "$@"; do
    $PY - "$config" "$OUT" <<'EOF'
import shutil, sys
from pathlib import Path
from vision.training.train import RUNS_DIR, TrainConfig, kept_weights, ship

config, out = TrainConfig.load(sys.argv[1]), Path(sys.argv[2])
run = RUNS_DIR / config.name
if not config.output.is_file():
    try:
        weights = kept_weights(run, config.keep)
    except FileNotFoundError as error:
        print(f"{config.name}: nothing to ship ({error})")
        sys.exit(0)
    print(f"{config.name}: stopped before the end; shipping its last saved epoch {weights.name}")
    shutil.copy2(weights, config.output)
    ship(config.output)
shutil.copy2(config.output, out / config.output.name)
if (run / "results.csv").is_file():
    shutil.copy2(run / "results.csv", out / f"{config.name}.results.csv")
print(f"{config.name}: {config.output.name} and results in {out}")
EOF
done
say "done"
