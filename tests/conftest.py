"""Suite-wide settings: offline ultralytics, no automatic installs, hypothesis without deadlines
(the machine is shared by training runs, so per-example time limits would be flaky, and tests
assert behaviour, not time), derandomised so a CI run sees the examples a local run saw."""

import os

os.environ.setdefault("YOLO_OFFLINE", "1")
os.environ.setdefault("YOLO_AUTOINSTALL", "false")

from hypothesis import HealthCheck, settings  # noqa: E402

settings.register_profile(
    "istaka",
    deadline=None,
    derandomize=True,  # the same examples on every run: CI is reproducible
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("istaka")
