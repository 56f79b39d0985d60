"""The worker's one pipeline and the one thread that runs it.

Ultralytics models are not thread-safe and inference already uses every core, so each server
process builds its pipeline once at start-up and funnels every call through a single thread.  A
bounded count of waiting calls keeps a burst of uploads from queueing without limit: past it the
server answers 503 at once instead of making everyone wait.  A scan is admitted, with the pixel
count its image header declares, before its image is decoded, so a burst of large images is
refused before it takes any memory.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
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

    def __init__(
        self,
        pipeline: Any,
        max_pending: int,
        error: str | None = None,
        max_pixels: int | None = None,
    ) -> None:
        self.pipeline = pipeline
        self.error = error  # why there is no pipeline, when there is none
        self.max_pending = max_pending
        self.max_pixels = max_pixels  # pixels of admitted scans not yet done; None: no cap
        self._pending = 0
        self._pixels = 0
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

    @asynccontextmanager
    async def admit(self, pixels: int = 0) -> AsyncIterator[None]:
        """A place in the queue for a scan of ``pixels`` pixels, or ``ApiError`` 503 ``busy``
        when ``max_pending`` scans or ``max_pixels`` pixels are already admitted.

        >>> import asyncio
        >>> runner = PipelineRunner(None, max_pending=4, max_pixels=100)
        >>> async def two():
        ...     async with runner.admit(60):
        ...         try:
        ...             async with runner.admit(60):
        ...                 pass
        ...         except ApiError as exc:
        ...             return exc.code
        >>> asyncio.run(two())
        'busy'
        """
        if self._pending >= self.max_pending:
            raise ApiError(
                503,
                "busy",
                f"{self._pending} scans are already waiting (max_pending_scans); try again in"
                " a moment",
            )
        if self.max_pixels is not None and self._pixels + pixels > self.max_pixels:
            raise ApiError(
                503,
                "busy",
                f"{self._pixels} pixels of scans are already waiting; with this image's"
                f" {pixels} that is over max_queued_pixels ({self.max_pixels}); try again in a"
                " moment",
            )
        self._pending += 1
        self._pixels += pixels
        try:
            yield
        finally:
            self._pending -= 1
            self._pixels -= pixels

    async def run(self, fn: Callable[[Any], T]) -> T:
        """``fn(pipeline)`` on the inference thread, for a caller already admitted."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, fn, self.pipeline)

    async def call(self, fn: Callable[[Any], T], *, shed: bool = True) -> T:
        """``fn(pipeline)`` on the inference thread.  With ``shed``, refuse with 503 when full;
        without, it is counted as waiting but never refused (a stream's one frame in flight)."""
        if shed:
            async with self.admit():
                return await self.run(fn)
        self._pending += 1
        try:
            return await self.run(fn)
        finally:
            self._pending -= 1

    def close(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)
