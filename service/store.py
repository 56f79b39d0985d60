"""The table store: every table's owner, latest state and version, and the fan-out of new states
to the overlay pages watching it.

Two implementations pass the same contract (``tests/test_store.py``): ``MemoryStore``, one
process and nothing to install (the default), and ``RedisStore`` (``service.store_redis``), shared
by any number of workers and machines (``istaka serve --store redis://HOST:6379/0``).

A table is created once (the routers let only the server owner create one: ``service.auth``);
its creator gets the table's token, and every later write needs it or is the server owner's
(``Write``).  Only the token's SHA-256 is kept.  A write may carry an idempotency key (a retry is
answered with the first write's version and applied once) or an expected version
(compare-and-set).  Reading a table needs only its name, or also its viewer key when it was created
with one.

Only the newest state of a table is kept.  Each watcher (an overlay page) has a short queue of the
states published since it last read: a page that keeps up sees every version in order, a slow one
skips the oldest, and versions never go backwards or repeat.

>>> import asyncio
>>> async def demo():
...     store = MemoryStore(max_tables=10)
...     created = await store.create("home")
...     async with store.watch("home") as watch:
...         await store.publish("home", {"hand": ["R1"]}, created.token)
...         return [(await watch.next())["version"], (await watch.next())["state"]]
>>> asyncio.run(demo())
[0, {'hand': ['R1']}]
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import secrets
import time
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from service.errors import ApiError

Snapshot = dict[str, Any]  # {"table", "version", "updated_at", "state"}
WATCH_QUEUE = 32  # states a watcher may fall behind before it skips the oldest


def empty_snapshot(name: str) -> Snapshot:
    return {"table": name, "version": 0, "updated_at": None, "state": None}


def new_secret() -> str:
    return secrets.token_urlsafe(24)


def digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def same_digest(secret: str | None, expected: str | None) -> bool:
    """Whether ``secret`` hashes to ``expected``, in constant time."""
    if not secret or not expected:
        return False
    return hmac.compare_digest(digest(secret), expected)


@dataclass(frozen=True)
class Created:
    """A new table's secrets, shown once: the owner token and, if asked for, the viewer key."""

    table: str
    token: str
    viewer_key: str | None = None


@dataclass(frozen=True)
class Write:
    """How a write may apply: ``expected_version`` (compare-and-set: only onto that version, else
    412 ``version_mismatch``), ``idempotency_key`` (a retry with a key already applied to this
    table is answered with that write's version, ``"replayed": true``, and writes nothing), and
    whether the writer holds the server owner's token rather than the table's."""

    expected_version: int | None = None
    idempotency_key: str | None = None
    as_server_owner: bool = False


PLAIN_WRITE = Write()
KEPT_KEYS = 64  # idempotency keys remembered per table (the newest)


def version_mismatch(name: str, expected: int, actual: int) -> ApiError:
    return ApiError(
        412,
        "version_mismatch",
        f"table {name!r} is at version {actual}, not {expected} (If-Match): nothing written",
        version=actual,
    )


def forbidden(name: str, token: str | None) -> ApiError:
    if not token:
        return ApiError(
            401,
            "token_required",
            f"table {name!r} has an owner: send its token"
            " (header 'Authorization: Bearer TOKEN', or 'token' on the camera stream)",
        )
    return ApiError(403, "wrong_token", f"the token is not the owner token of table {name!r}")


def tables_full(max_tables: int) -> ApiError:
    return ApiError(
        503,
        "tables_full",
        f"{max_tables} tables exist (max_tables) and each was written to recently or is watched;"
        " try again later",
    )


class Watch:
    """One watcher's view of one table: the states published since it last read."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.version = -1  # the newest version handed out; the first read gets the snapshot
        self._queue: deque[Snapshot] = deque(maxlen=WATCH_QUEUE)
        self._ready = asyncio.Event()

    def offer(self, snapshot: Snapshot) -> None:
        """Queue ``snapshot`` if it is newer than anything queued or handed out."""
        newest = self._queue[-1]["version"] if self._queue else self.version
        if snapshot["version"] > newest:
            self._queue.append(snapshot)
            self._ready.set()

    def gone(self, reason: str) -> None:
        """The table no longer exists (the store lost it): drop what is queued, hand out a
        ``"gone"`` snapshot, and take any version after it (a table made again starts at 1)."""
        if self.version <= 0 and not self._queue:
            return  # it never existed for this watcher: nothing to take back
        self._queue.clear()
        self._queue.append({**empty_snapshot(self.name), "gone": True, "message": reason})
        self.version = -1
        self._ready.set()

    async def next(self) -> Snapshot:
        """The next newer state, waiting for one."""
        while not self._queue:
            self._ready.clear()
            await self._ready.wait()
        snapshot = self._queue.popleft()
        self.version = -1 if snapshot.get("gone") else snapshot["version"]
        return snapshot


class Fanout:
    """The watchers of this process, by table name."""

    def __init__(self) -> None:
        self._watches: dict[str, set[Watch]] = {}

    def add(self, watch: Watch) -> bool:
        """Add a watcher; True when it is its table's first in this process."""
        watches = self._watches.setdefault(watch.name, set())
        watches.add(watch)
        return len(watches) == 1

    def remove(self, watch: Watch) -> bool:
        """Remove a watcher; True when it was its table's last in this process."""
        watches = self._watches.get(watch.name)
        if not watches:
            return False
        watches.discard(watch)
        if watches:
            return False
        del self._watches[watch.name]
        return True

    def deliver(self, snapshot: Snapshot) -> None:
        for watch in self._watches.get(snapshot["table"], ()):
            watch.offer(snapshot)

    def gone(self, name: str, reason: str) -> None:
        for watch in self._watches.get(name, ()):
            watch.gone(reason)

    def watched(self, name: str) -> bool:
        return name in self._watches

    def names(self) -> list[str]:
        return list(self._watches)

    @property
    def count(self) -> int:
        return sum(len(w) for w in self._watches.values())


class TableStore(ABC):
    """What the routers need from a store.  Every method may raise ``ApiError`` (a wrong token,
    no room for another table, the shared store unreachable)."""

    def __init__(self, max_tables: int, keep_seconds: float) -> None:
        self.max_tables = max_tables
        self.keep_seconds = keep_seconds  # a table written this recently is never evicted
        self.fanout = Fanout()

    @abstractmethod
    async def create(self, name: str, *, viewer_key: bool = False) -> Created | None:
        """Create the table and return its secrets, or None if the name is taken."""

    @abstractmethod
    async def exists(self, name: str) -> bool:
        """Whether the table has been created (and not evicted)."""

    @abstractmethod
    async def publish(
        self, name: str, state: dict[str, Any], token: str | None, write: Write = PLAIN_WRITE
    ) -> Snapshot:
        """Make ``state`` the table's latest, as its owner (or the server's: ``write``); returns
        the new snapshot, or the replayed one of an idempotency key already applied."""

    @abstractmethod
    async def snapshot(self, name: str, viewer_key: str | None = None) -> Snapshot:
        """The table's latest state (version 0 and state None if unseen)."""

    @abstractmethod
    async def authorize(self, name: str, token: str | None) -> None:
        """Nothing if ``token`` is the table's owner token, else ``ApiError`` 401/403/404."""

    async def start(self) -> None:
        """Connect (when the store is remote); called once per worker at start-up."""
        return None  # nothing to do for a store in this process

    async def available(self) -> bool:
        """Whether the store answers now (``/health``), without the retries writes get."""
        return True  # a store in this process is always there

    async def close(self) -> None:
        """Release connections and tasks."""
        return None  # nothing to do for a store in this process

    async def _subscribed(self, name: str) -> None:
        """Called when a table gets its first watcher in this process."""
        return None  # nothing to do for a store in this process

    async def _unsubscribed(self, name: str) -> None:
        """Called when a table loses its last watcher in this process."""
        return None  # nothing to do for a store in this process

    @asynccontextmanager
    async def watch(self, name: str, viewer_key: str | None = None) -> AsyncIterator[Watch]:
        """A ``Watch`` of the table whose first ``next()`` is its current snapshot."""
        watch = Watch(name)
        if self.fanout.add(watch):
            try:
                await self._subscribed(name)
            except BaseException:
                self.fanout.remove(watch)
                raise
        try:
            # After subscribing, so no state published in between is missed; newer states that
            # arrive meanwhile are queued behind it, older ones are not queued twice.
            first = await self.snapshot(name, viewer_key)
            watch._queue.appendleft(first)
            while len(watch._queue) > 1 and watch._queue[1]["version"] <= first["version"]:
                del watch._queue[1]
            watch._ready.set()
            yield watch
        finally:
            if self.fanout.remove(watch):
                await self._unsubscribed(name)


@dataclass
class _Table:
    token_digest: str
    viewer_digest: str | None = None
    state: dict[str, Any] | None = None
    version: int = 0
    updated_at: float | None = None
    created_at: float = field(default_factory=time.time)
    applied: dict[str, int] = field(default_factory=dict)  # idempotency key -> version

    @property
    def last_activity(self) -> float:
        return self.updated_at or self.created_at

    def snapshot(self, name: str) -> Snapshot:
        return {
            "table": name,
            "version": self.version,
            "updated_at": self.updated_at,
            "state": self.state,
        }


class MemoryStore(TableStore):
    """Tables in this process's memory: the default, for one worker.

    At ``max_tables``, creating a table evicts one: first tables never written to, oldest first,
    then the table written to longest ago, but never a table watched in this process or written
    to within ``keep_seconds``; when every table is one of those, creating answers 503
    ``tables_full`` and nothing is evicted.
    """

    def __init__(self, max_tables: int = 1000, keep_seconds: float = 600.0) -> None:
        super().__init__(max_tables, keep_seconds)
        self._tables: dict[str, _Table] = {}

    async def create(self, name: str, *, viewer_key: bool = False) -> Created | None:
        if name in self._tables:
            return None
        if len(self._tables) >= self.max_tables:
            self._evict_one()
        token = new_secret()
        key = new_secret() if viewer_key else None
        self._tables[name] = _Table(digest(token), digest(key) if key else None)
        return Created(name, token, key)

    def _evict_one(self) -> None:
        now = time.time()
        candidates = [
            (table.updated_at is not None, table.last_activity, name)
            for name, table in self._tables.items()
            if not self.fanout.watched(name)
            and (table.updated_at is None or now - table.updated_at >= self.keep_seconds)
        ]
        if not candidates:
            raise tables_full(self.max_tables)
        del self._tables[min(candidates)[2]]

    async def exists(self, name: str) -> bool:
        return name in self._tables

    async def authorize(self, name: str, token: str | None) -> None:
        table = self._tables.get(name)
        if table is None:
            raise ApiError(404, "no_such_table", f"there is no table {name!r}")
        if not same_digest(token, table.token_digest):
            raise forbidden(name, token)

    async def publish(
        self, name: str, state: dict[str, Any], token: str | None, write: Write = PLAIN_WRITE
    ) -> Snapshot:
        if write.as_server_owner:
            if name not in self._tables:
                raise ApiError(404, "no_such_table", f"there is no table {name!r}")
        else:
            await self.authorize(name, token)
        table = self._tables[name]
        key = write.idempotency_key
        if key is not None and key in table.applied:
            return {**table.snapshot(name), "version": table.applied[key], "replayed": True}
        if write.expected_version is not None and write.expected_version != table.version:
            raise version_mismatch(name, write.expected_version, table.version)
        table.state = state
        table.version += 1
        table.updated_at = time.time()
        if key is not None:
            table.applied[key] = table.version
            while len(table.applied) > KEPT_KEYS:
                del table.applied[next(iter(table.applied))]
        snapshot = table.snapshot(name)
        self.fanout.deliver(snapshot)
        return snapshot

    async def snapshot(self, name: str, viewer_key: str | None = None) -> Snapshot:
        table = self._tables.get(name)
        if table is None:
            return empty_snapshot(name)
        check_viewer(name, table.viewer_digest, viewer_key)
        return table.snapshot(name)

    def __len__(self) -> int:
        return len(self._tables)


def check_viewer(name: str, expected: str | None, key: str | None) -> None:
    if expected is not None and not same_digest(key, expected):
        raise ApiError(
            403, "viewer_key_required", f"table {name!r} is private: add its viewer key (?key=)"
        )


def make_store(
    url: str | None, max_tables: int, keep_seconds: float, *, ephemeral: bool = False
) -> TableStore:
    """``MemoryStore`` without a URL; ``RedisStore`` for ``redis://`` or ``rediss://`` (Valkey
    speaks the same protocol), which refuses to start on a Redis that does not persist unless
    ``ephemeral``."""
    if not url or url == "memory":
        return MemoryStore(max_tables, keep_seconds)
    if url.startswith(("redis://", "rediss://", "unix://")):
        from service.store_redis import RedisStore

        return RedisStore(url, max_tables, keep_seconds, ephemeral=ephemeral)
    raise ValueError(f"--store takes memory or redis://HOST:PORT/DB, got {url!r}")
