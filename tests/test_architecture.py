"""The layout of DESIGN: runtime reading never loads training code; command lines live in istaka/.

Each check runs in a fresh interpreter, so modules imported by other tests cannot hide an import.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

# What `istaka scan`, `live` and `serve` import: none of these may load training modules.
RUNTIME_MODULES = (
    "vision.recognizer",
    "vision.pipeline",
    "vision.crops",
    "vision.decode",
    "vision.layout",
    "vision.smoothing",
    "vision.draw",
    "service.app",
    "istaka.cli",
)
FORBIDDEN = ("vision.training", "ultralytics", "torch", "torchvision")


def _loaded_after(code: str) -> list[str]:
    probe = f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("module", RUNTIME_MODULES)
def test_runtime_modules_load_no_training_code(module: str) -> None:
    loaded = _loaded_after(f"import {module}")
    bad = [m for m in loaded if any(m == f or m.startswith(f + ".") for f in FORBIDDEN)]
    assert bad == [], f"importing {module} loads {bad[:5]}"


def test_reading_a_photo_loads_no_training_code() -> None:
    """The whole runtime path, model loaded and a photo read, not just the imports."""
    code = (
        "from vision.pipeline import Pipeline, load_image\n"
        "Pipeline.default().scan(load_image('examples/rack_real.jpg'))"
    )
    loaded = _loaded_after(code)
    bad = [m for m in loaded if any(m == f or m.startswith(f + ".") for f in FORBIDDEN)]
    assert bad == [], bad[:5]


def test_every_command_is_listed_without_training_code() -> None:
    """`istaka --help` builds every subcommand's parser: none of them may import training code at
    the top (a read-only install has no PIL, torch or ultralytics)."""
    loaded = _loaded_after("from istaka.cli import build_parser\nbuild_parser()")
    bad = [m for m in loaded if any(m == f or m.startswith(f + ".") for f in FORBIDDEN)]
    assert bad == [], bad[:5]


def test_the_probe_sees_a_training_import() -> None:
    """The check above can fail: importing the renderer does load training code."""
    loaded = _loaded_after("import vision.training.synth.render")
    assert "vision.training" in loaded


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


LIBRARY_FILES = sorted(
    p for pkg in ("okey", "vision", "service") for p in (REPO / pkg).rglob("*.py")
)


def test_library_packages_hold_no_command_line_code() -> None:
    """argparse and istaka.* belong to istaka/: the libraries are called, they do not parse."""
    offenders = [
        str(p.relative_to(REPO))
        for p in LIBRARY_FILES
        if {"argparse", "istaka", "istaka.cli"} & _imports(p)
    ]
    assert offenders == []


def test_the_engine_imports_nothing_outside_the_standard_library_and_itself() -> None:
    """okey/ is pure Python: the base install (no extras) runs it."""
    allowed_roots = set(sys.stdlib_module_names) | {"okey"}
    offenders = {
        str(p.relative_to(REPO)): sorted(
            n for n in _imports(p) if n.split(".")[0] not in allowed_roots
        )
        for p in (REPO / "okey").rglob("*.py")
    }
    assert {k: v for k, v in offenders.items() if v} == {}


def test_a_command_whose_extra_is_missing_names_it() -> None:
    """In an engine-only install `istaka scan` says which extra to install, with no traceback:
    here numpy is hidden from a fresh interpreter."""
    probe = (
        "import sys\n"
        "class Hide:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] == 'numpy':\n"
        "            raise ModuleNotFoundError(f'No module named {name!r}', name=name)\n"
        "sys.meta_path.insert(0, Hide())\n"
        "from istaka.cli import main\n"
        "sys.exit(main(['scan', 'examples/rack_full.jpg']))\n"
    )
    run = subprocess.run([sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True)
    assert run.returncode == 2, run.stderr
    assert "needs the 'read' extra (numpy is not installed)" in run.stderr
    assert "Traceback" not in run.stderr
