"""The examples in the service's docstrings run."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "service.app",
    "service.errors",
    "service.images",
    "service.models",
    "service.rules_model",
    "service.runner",
    "service.settings",
    "service.stream",
    "service.limits",
    "service.security",
    "service.store",
    "service.store_redis",
    "service.auth",
    "service.slow",
    "service.quota",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name))
    assert result.failed == 0
    assert result.attempted > 0, f"{name} has no examples"
