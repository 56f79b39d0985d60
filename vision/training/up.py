"""Train the way-up model (``vision.up``): which way up a tile's crop stands, learned from renders.

The tile classifier reads a tile the same whichever way up it is cut (it was trained with crops
turned over, as players set tiles on a rack), so it cannot say which way up a rack stands or which
way a tile lying on a table faces: read upside down, a rack's rows and tiles come out reversed. The
renderer knows each tile's true top (its face's corners, and whether the face was drawn upside
down), so the true way up is free on renders:

1. ``build``: render scenes of the wide style pool (``POOL``: tiered racks frontal and oblique,
   near and far, two-tier wooden racks, tables) and cut every tile whose number shows along its
   true corners, stood upright with its surroundings, with the classifier's camera changes
   (turn jitter, blur, motion, light, noise, JPEG: ``vision.training.crops.camera_crop``);
2. ``train``: windows are cut from those as the recogniser may cut a tile (near it, or up to half
   a tile off: a first look's box on a close tiered rack; ``_window``), and a small CNN
   (``UpNet``) learns the quarter turn (0, 1, 2, 3: ``np.rot90``'s k) each window was given at
   random; a tenth of the renders is held out to measure it;
3. the ONNX export (``models/tile_up.onnx``) is what ``vision.up.WayUp`` runs.

    .venv/bin/istaka way-up build      # 900 renders -> datasets/build/up/crops.npz
    .venv/bin/istaka way-up train      # -> models/tile_up.onnx (6 epochs)

Held-out style pool renders (``benchmarks/tiers.py``'s check) are never used here.
"""

from __future__ import annotations

import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

from vision.crops import CROP_PAD, corner_rect, straight_crop
from vision.up import SIZE, to_input

SCENE_MIX = (
    ("tiers", 4),  # not "tiers_paste": its real faces may be pasted upside down (no true up)
    ("tiers2_frontal", 1),
    ("tiers2_oblique", 1),
    ("tiers3_frontal", 1),
    ("tiers3_oblique", 1),
    ("tiers2_frontal_far", 1),
    ("tiers2_oblique_far", 1),
    ("tiers3_frontal_far", 1),
    ("tiers3_oblique_far", 1),
    ("rack", 2),
    ("table", 2),
)
SEED = 5300  # + the kind's index; benchmarks/tiers.py renders 7100.. (check), 9100.. (decide)
CONTEXT = 2.5  # a tile's crop is stored with this many times its size around it
CUT = 120  # pixels a side of the stored context (a tile 48 px, the model's input)
FAR_SHARE = 0.5  # share of windows cut up to half a tile off
POOL = "wide"  # the classifier's widest training pool (33 typefaces), none of the held-out styles
MIN_NUMBER = 0.8  # share of a tile's number that must show for its crop to be used


def _kinds(scenes: int) -> list[tuple[str, int, int]]:
    weights = sum(w for _, w in SCENE_MIX)
    jobs = []
    for k, (kind, w) in enumerate(SCENE_MIX):
        for index in range(max(1, round(scenes * w / weights))):
            jobs.append((kind, SEED + k, index))
    return jobs


def _scene_crops(job: tuple[str, int, int]) -> tuple[np.ndarray, int]:
    """Crops of one render's tiles whose number shows, each stood upright with ``CONTEXT`` times
    the tile around it (its neighbours, the tier below) for ``_window`` to cut from, two copies
    (as cut, and with the camera's changes); and the render's index (to hold renders out)."""
    from vision.training.crops import AUGMENT, camera_crop
    from vision.training.synth.dataset import render_sample, sample_rng

    kind, seed, index = job
    rng = np.random.default_rng(sample_rng(seed, index).integers(1 << 31))
    size = (1200, 900) if rng.random() < 0.5 else (900, 1200)
    image, truth = render_sample(seed, index, POOL, size, scene_kind=kind)
    out = []
    for t in truth["tiles"]:
        if not t.get("labelled") or t.get("quad") is None:
            continue
        if t.get("number_visible", 1.0) < MIN_NUMBER or t.get("readable") is False:
            continue
        corners = np.float32(t["quad"])
        if t.get("upside_down"):  # the face drawn turned over: its top is the body's bottom
            corners = corners[[2, 3, 0, 1]]
        cx, cy, w, h, turn = corner_rect(corners)
        if min(w, h) < 8:
            continue
        w, h = w * CONTEXT, h * CONTEXT
        for copy in range(2):
            if copy == 0:
                crop = straight_crop(image, (cx, cy, w, h, turn), CUT, 0.0, "given")
            else:
                frame = (cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2)
                crop = camera_crop(image, frame, rng, CUT, 0.0, augment=AUGMENT, turn=turn)
            out.append(crop)
    crops = np.stack(out) if out else np.zeros((0, CUT, CUT, 3), np.uint8)
    return crops, index


def _window(context: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A tile's crop cut from its context as the recogniser might cut it: most near the tile
    (shifted up to a tenth of it), the rest up to half a tile off along its height and a
    quarter across (a tier's line found along the tiles' feet, a box reaching into the tier
    below), 0.9-1.3 times the tile's size."""
    import cv2

    tile = CUT / CONTEXT
    far = rng.random() < FAR_SHARE
    dx = rng.uniform(-0.25, 0.25) if far else rng.uniform(-0.1, 0.1)
    dy = rng.uniform(-0.5, 0.5) if far else rng.uniform(-0.1, 0.1)
    side = tile * (1 + 2 * CROP_PAD) * rng.uniform(0.9, 1.3)
    cx, cy = CUT / 2 + dx * tile, CUT / 2 + dy * tile
    x0, y0 = int(round(cx - side / 2)), int(round(cy - side / 2))
    x1, y1 = int(round(cx + side / 2)), int(round(cy + side / 2))
    window = context[max(y0, 0) : min(y1, CUT), max(x0, 0) : min(x1, CUT)]
    return cv2.resize(window, (SIZE, SIZE), interpolation=cv2.INTER_AREA)


def build(scenes: int, out: Path, workers: int = 2) -> None:
    jobs = _kinds(scenes)
    crops, groups = [], []
    start = time.time()
    with ProcessPoolExecutor(workers) as pool:
        for n, ((kind, _, _), (c, index)) in enumerate(
            zip(jobs, pool.map(_scene_crops, jobs, chunksize=4), strict=True)
        ):
            crops.append(c)
            groups.append(np.full(len(c), index % 10, np.int8))
            if n % 50 == 0:
                print(f"{n}/{len(jobs)} {kind} {time.time() - start:.0f}s", flush=True)
    out.mkdir(parents=True, exist_ok=True)
    np.savez(out / "crops.npz", crops=np.concatenate(crops), fold=np.concatenate(groups))
    print(f"{sum(len(c) for c in crops)} crops from {len(jobs)} renders -> {out}")


def _batches(crops: np.ndarray, rng: np.random.Generator, batch: int):
    """Shuffled batches of (tile windows cut from the stored contexts, ``_window``, turned by a
    random quarter turn; the turn)."""
    order = rng.permutation(len(crops))
    for i in range(0, len(order) - batch + 1, batch):
        pick = [_window(crops[j], rng) for j in order[i : i + batch]]
        turns = rng.integers(0, 4, len(pick))
        turned = np.stack([np.rot90(c, k) for c, k in zip(pick, turns, strict=True)])
        yield turned, turns


def _evaluate(net, crops: np.ndarray) -> tuple[float, float]:
    """Quarter-turn accuracy over all four turns of each crop, and up-or-down accuracy (the
    upright crop and its half turn, told apart by those two classes alone)."""
    import torch

    right = up_right = total = 0
    net.eval()
    with torch.no_grad():
        for i in range(0, len(crops), 512):
            block = crops[i : i + 512]
            probs = []
            for k in range(4):
                x = np.stack([np.rot90(c, k) for c in block])
                probs.append(torch.softmax(net(_tensor(x)), 1).numpy())
            for k in range(4):
                right += int((probs[k].argmax(1) == k).sum())
            up_right += int((probs[0][:, 0] > probs[0][:, 2]).sum())
            up_right += int((probs[2][:, 2] > probs[2][:, 0]).sum())
            total += len(block)
    return right / (4 * total), up_right / (2 * total)


def _tensor(batch: np.ndarray):
    import torch

    return torch.from_numpy(to_input(batch))


def UpNet():  # noqa: N802 - a module factory, named as the network it builds
    """Four stages of 3x3 convolutions (16, 32, 64, 96 channels, each halving the crop), the 3 x 3
    map flattened (where on the tile the ink sits is the point) into the four quarter turns."""
    from torch import nn

    def stage(a: int, b: int, twice: bool) -> list:
        layers = [nn.Conv2d(a, b, 3, padding=1, bias=False), nn.BatchNorm2d(b), nn.ReLU()]
        if twice:
            layers += [nn.Conv2d(b, b, 3, padding=1, bias=False), nn.BatchNorm2d(b), nn.ReLU()]
        return [*layers, nn.MaxPool2d(2)]

    return nn.Sequential(
        *stage(3, 16, False),
        *stage(16, 32, True),
        *stage(32, 64, True),
        *stage(64, 96, False),
        nn.Flatten(),
        nn.Dropout(0.2),
        nn.Linear(96 * (SIZE // 16) ** 2, 4),
    )


def train(data: Path, out: Path, epochs: int, batch: int = 128, seed: int = 0) -> None:
    import torch

    torch.manual_seed(seed)
    torch.set_num_threads(2)
    stored = np.load(data / "crops.npz")
    crops, fold = stored["crops"], stored["fold"]
    held = fold == 0  # renders whose index ends in 0: measured, never trained on
    train_crops = crops[~held]
    window_rng = np.random.default_rng(seed + 1)  # the held-out windows, cut once
    val_crops = np.stack([_window(c, window_rng) for c in crops[held]])
    print(f"train {len(train_crops)} crops, held out {len(val_crops)}", flush=True)
    net = UpNet()
    steps = epochs * (len(train_crops) // batch)
    opt = torch.optim.AdamW(net.parameters(), lr=2e-3, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=3e-3, total_steps=steps)
    loss_fn = torch.nn.CrossEntropyLoss(label_smoothing=0.05)
    rng = np.random.default_rng(seed)
    start = time.time()
    for epoch in range(epochs):
        net.train()
        total, done = 0.0, 0
        for x, y in _batches(train_crops, rng, batch):
            opt.zero_grad()
            loss = loss_fn(net(_tensor(x)), torch.from_numpy(y))
            loss.backward()
            opt.step()
            sched.step()
            total += float(loss.detach())
            done += 1
        quarter, updown = _evaluate(net, val_crops)
        print(
            f"epoch {epoch + 1}/{epochs} loss {total / max(done, 1):.4f} held-out quarter turn "
            f"{quarter:.4f} up/down {updown:.4f} {time.time() - start:.0f}s",
            flush=True,
        )
        _export(net, out)  # each epoch: a run cut short still leaves its last model
    print(f"-> {out}")


def _export(net, out: Path) -> None:
    import torch

    net.eval()
    out.parent.mkdir(parents=True, exist_ok=True)
    dummy = torch.zeros(1, 3, SIZE, SIZE)
    torch.onnx.export(
        net,
        dummy,
        str(out),
        input_names=["images"],
        output_names=["logits"],
        dynamic_axes={"images": {0: "batch"}, "logits": {0: "batch"}},
        opset_version=17,
        dynamo=False,
    )
