"""Table states for the overlay: the latest state of each table, and a wake-up for its watchers.

Only the newest state of a table is kept.  A watcher waits for a version newer than the one it
sent last, so a slow overlay page skips states instead of queueing them, and a closed page leaves
nothing behind.

>>> import asyncio
>>> hub = TableHub(max_tables=10)
>>> hub.publish("home", {"hand": ["R1"]})["version"]
1
>>> asyncio.run(hub.wait_newer("home", 0))["state"]
{'hand': ['R1']}
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from typing import Any


class _Table:
    __slots__ = ("changed", "state", "updated_at", "version", "watchers")

    def __init__(self) -> None:
        self.state: dict[str, Any] | None = None
        self.version = 0
        self.updated_at = 0.0
        self.watchers = 0
        self.changed = asyncio.Event()


class TableHub:
    """The latest state per table name, at most ``max_tables`` tables in memory."""

    def __init__(self, max_tables: int) -> None:
        self.max_tables = max_tables
        self._tables: OrderedDict[str, _Table] = OrderedDict()

    def _table(self, name: str) -> _Table:
        table = self._tables.get(name)
        if table is None:
            table = self._tables[name] = _Table()
            self._evict()
        self._tables.move_to_end(name)
        return table

    def _evict(self) -> None:
        # Drop the least recently used tables nobody watches; watched tables always stay.
        for name in list(self._tables):
            if len(self._tables) <= self.max_tables:
                return
            if self._tables[name].watchers == 0:
                del self._tables[name]

    def publish(self, name: str, state: dict[str, Any]) -> dict[str, Any]:
        """Make ``state`` the table's latest and wake its watchers; returns the snapshot."""
        table = self._table(name)
        table.state = state
        table.version += 1
        table.updated_at = time.time()
        woken, table.changed = table.changed, asyncio.Event()
        woken.set()
        return self.snapshot(name)

    def snapshot(self, name: str) -> dict[str, Any]:
        """``{"table", "version", "updated_at", "state"}``; version 0 and state None if unseen."""
        table = self._tables.get(name)
        if table is None:
            return {"table": name, "version": 0, "updated_at": None, "state": None}
        return {
            "table": name,
            "version": table.version,
            "updated_at": table.updated_at or None,
            "state": table.state,
        }

    async def wait_newer(self, name: str, version: int) -> dict[str, Any]:
        """The snapshot once the table's version differs from ``version``."""
        table = self._table(name)
        while table.version == version:
            await table.changed.wait()
        return self.snapshot(name)

    def watch(self, name: str) -> None:
        self._table(name).watchers += 1

    def unwatch(self, name: str) -> None:
        table = self._tables.get(name)
        if table is not None:
            table.watchers = max(0, table.watchers - 1)
