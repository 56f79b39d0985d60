"""The worker's one pipeline and the one thread that runs it.

Ultralytics models are not thread-safe and inference already uses every core, so each server
process builds its pipeline once at start-up and funnels every call through a single thread.  A
bounded count of waiting calls keeps a burst of uploads from queueing without limit: past it the
server answers 503 at once instead of making everyone wait.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from service.errors import ApiError

T = TypeVar("T")


class PipelineRunner:
    """Runs functions of the pipeline on one dedicated thread, at most ``max_pending`` waiting.

    >>> import asyncio
    >>> runner = PipelineRunner(pipeline=None, max_pending=2)
    >>> asyncio.run(runner.call(lambda pipeline: 1 + 1))
    2
    >>> runner.close()
    """

    def __init__(self, pipeline: Any, max_pending: int, error: str | None = None) -> None:
        self.pipeline = pipeline
        self.error = error  # why there is no pipeline, when there is none
        self.max_pending = max_pending
        self._pending = 0
        self.streams = 0  # open camera streams feeding this runner
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="istaka-pipeline")

    @property
    def pending(self) -> int:
        return self._pending

    def require(self) -> Any:
        """The pipeline, or ``ApiError`` 503 saying why the server has none."""
        if self.pipeline is None:
            reason = self.error or "the server was started without a recognition model"
            raise ApiError(503, "no_model", f"recognition is unavailable: {reason}")
        return self.pipeline

    async def call(self, fn: Callable[[Any], T], *, shed: bool = True) -> T:
        """``fn(pipeline)`` on the inference thread.  With ``shed``, refuse with 503 when full."""
        if shed and self._pending >= self.max_pending:
            raise ApiError(
                503,
                "busy",
                f"{self._pending} scans are already waiting; try again in a moment",
            )
        self._pending += 1
        try:
            loop = asyncio.get_running_loop()
            return await loop.run_in_executor(self._executor, fn, self.pipeline)
        finally:
            self._pending -= 1

    def close(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)
