"""Schemathesis over the app's OpenAPI document, against a real uvicorn server: whatever a client
sends that the document allows (and much that it does not), the server never answers 5xx."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from conftest_service import LiveServer, live_server, require_model
from hypothesis import HealthCheck, settings

from service.app import create_app
from service.settings import Settings

if os.environ.get("CI", "").lower() == "true":
    import schemathesis  # in CI the dev extra is installed: a missing package is a failure
else:
    schemathesis = pytest.importorskip("schemathesis", reason="pip install -e '.[dev]'")
from schemathesis.checks import not_a_server_error  # noqa: E402

pytestmark = pytest.mark.slow

# The document is the app's own; the server under test is built from the same factory.
schema = schemathesis.openapi.from_dict(create_app(Settings(load_pipeline=False)).openapi())


@pytest.fixture(scope="module")
def server() -> Iterator[LiveServer]:
    # Small caps so generated bodies reach the limits; the real model so /scan runs for real.
    with live_server(Settings(max_upload_bytes=300_000, max_pixels=4_000_000)) as live:
        yield live


@schema.parametrize()
@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
def test_no_server_errors(case: schemathesis.Case, server: LiveServer) -> None:
    if case.operation.path == "/api/v1/scan":
        require_model()  # without the model a decodable image is rightly answered 503
    response = case.call(base_url=server.url, timeout=60)
    case.validate_response(response, checks=[not_a_server_error])
    assert response.status_code < 500, response.text
