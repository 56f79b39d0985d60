"""``RedisStore``: the table store in Redis (or Valkey), shared by every worker and machine.

Layout under the key prefix (default ``istaka:``): ``t:NAME`` a hash (owner token digest, viewer
key digest, version, state as JSON, times), ``index`` a sorted set of the table names ordered for
eviction, and the channel ``c:NAME`` on which each new snapshot is published.  Creating, evicting
and publishing are Lua scripts, so a version is incremented, stored and published in one atomic
step: every subscriber sees the versions of a table in order, each once.

Each worker keeps one pub/sub connection, subscribed to the tables its overlay pages watch.  When
Redis goes away the worker reconnects by itself (with back-off), subscribes again and re-reads the
watched tables, so a page catches up on whatever it missed meanwhile.  Commands are retried for a
few seconds, so a Redis restart looks like a slow answer; past that a write is refused with 503
``store_unavailable`` (and so never acknowledged).  Run Redis with ``appendonly yes`` and
``appendfsync always`` to keep every acknowledged write through a Redis restart: a store refuses to
start on a Redis that keeps nothing (``persistence_of``) unless told it may (``--store-ephemeral``).
After a reconnection, a watched table that no longer exists is handed to its watchers as
``"gone"`` (the overlay pages say so rather than show its last state).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from typing import Any

import redis.asyncio as aioredis
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError, ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

from service.errors import ApiError
from service.store import (
    KEPT_KEYS,
    PLAIN_WRITE,
    Created,
    Snapshot,
    TableStore,
    Write,
    check_viewer,
    digest,
    empty_snapshot,
    forbidden,
    new_secret,
    tables_full,
    version_mismatch,
)

log = logging.getLogger("istaka.service.store")

# A never-written table sorts this far before any written one, so junk is evicted first.
_UNWRITTEN = 1e10

_CREATE = """
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
local now = tonumber(ARGV[4])
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[5]) then
  local oldest = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
  if tonumber(oldest[2]) > now - tonumber(ARGV[6]) then return -1 end
  redis.call('DEL', ARGV[7] .. 't:' .. oldest[1])
  redis.call('ZREM', KEYS[2], oldest[1])
end
redis.call('HSET', KEYS[1], 'token', ARGV[2], 'version', 0, 'created_at', ARGV[4])
if ARGV[3] ~= '' then redis.call('HSET', KEYS[1], 'viewer', ARGV[3]) end
redis.call('ZADD', KEYS[2], now - tonumber(ARGV[8]), ARGV[1])
return 1
"""

# ARGV: token digest, state JSON, now, name, channel, server owner ('1'), expected version ('' any),
# idempotency key ('' none).  Returns {status, version}: 0 applied, 1 replayed (the key's version),
# -1 no such table, -2 wrong token, -3 another version (the current one).
_PUBLISH = """
local token = redis.call('HGET', KEYS[1], 'token')
if not token then return {-1, 0} end
if ARGV[6] ~= '1' and token ~= ARGV[1] then return {-2, 0} end
if ARGV[8] ~= '' then
  local applied = redis.call('HGET', KEYS[1], 'k:' .. ARGV[8])
  if applied then return {1, tonumber(applied)} end
end
local current = tonumber(redis.call('HGET', KEYS[1], 'version'))
if ARGV[7] ~= '' and tonumber(ARGV[7]) ~= current then return {-3, current} end
local version = redis.call('HINCRBY', KEYS[1], 'version', 1)
redis.call('HSET', KEYS[1], 'state', ARGV[2], 'updated_at', ARGV[3])
if ARGV[8] ~= '' then
  redis.call('HSET', KEYS[1], 'k:' .. ARGV[8], version)
  local keys = cjson.decode(redis.call('HGET', KEYS[1], 'keys') or '[]')
  table.insert(keys, ARGV[8])
  if #keys > tonumber(ARGV[9]) then redis.call('HDEL', KEYS[1], 'k:' .. table.remove(keys, 1)) end
  redis.call('HSET', KEYS[1], 'keys', cjson.encode(keys))
end
redis.call('ZADD', KEYS[2], tonumber(ARGV[3]), ARGV[4])
redis.call('PUBLISH', ARGV[5], '{"table":' .. cjson.encode(ARGV[4]) .. ',"version":' .. version
  .. ',"updated_at":' .. ARGV[3] .. ',"state":' .. ARGV[2] .. '}')
return {0, version}
"""

GONE = "the table store no longer has this table (Redis lost its data, or the table was evicted)"


def persistence_of(config: dict[str, str]) -> str | None:
    """How a Redis persists, from its ``CONFIG GET appendonly appendfsync save``: a line saying
    what a restart keeps, or None when it keeps nothing.

    >>> persistence_of({"appendonly": "yes", "appendfsync": "always", "save": ""})
    'AOF, appendfsync always: every acknowledged write survives a restart'
    >>> persistence_of({"appendonly": "no", "save": ""}) is None
    True
    """
    if config.get("appendonly") == "yes":
        fsync = config.get("appendfsync", "everysec")
        if fsync == "always":
            return "AOF, appendfsync always: every acknowledged write survives a restart"
        return f"AOF, appendfsync {fsync}: a crash of the machine may lose the last second"
    if config.get("save", "").strip():
        return (
            f"RDB snapshots only (save {config['save']}): a restart loses the writes since the"
            " last snapshot; appendonly yes keeps them"
        )
    return None


def not_persistent(url: str) -> str:
    return (
        f"--store {url}: this Redis keeps nothing through a restart (no appendonly, no save), so"
        " every table and its token would be lost with it; start it with 'appendonly yes'"
        " 'appendfsync always', or add --store-ephemeral to accept that"
    )


def unavailable(exc: Exception) -> ApiError:
    return ApiError(503, "store_unavailable", f"the table store cannot be reached: {exc}")


class RedisStore(TableStore):
    """Tables in Redis; eviction as ``MemoryStore``'s, except that watchers are per process and
    so do not keep a table (a table written within ``keep_seconds`` is still never evicted)."""

    def __init__(
        self,
        url: str,
        max_tables: int = 1000,
        keep_seconds: float = 600.0,
        prefix: str = "istaka:",
        *,
        ephemeral: bool = False,
    ) -> None:
        super().__init__(max_tables, keep_seconds)
        self.url = url
        self.ephemeral = ephemeral  # start on a Redis that does not persist
        self.persistence: str | None = None
        self.prefix = prefix
        self._redis = aioredis.from_url(
            url,
            decode_responses=True,
            socket_connect_timeout=2,
            socket_timeout=5,
            health_check_interval=15,
            retry=Retry(ExponentialBackoff(cap=1.0, base=0.05), 10),
            retry_on_error=[RedisConnectionError, RedisTimeoutError],
        )
        self._create = self._redis.register_script(_CREATE)
        self._publish = self._redis.register_script(_PUBLISH)
        self._pubsub: Any = None
        self._confirmed: dict[str, asyncio.Event] = {}  # channels waiting for SUBSCRIBE's answer
        self._listener: asyncio.Task[None] | None = None
        self._catching_up: asyncio.Task[None] | None = None
        self._closed = False
        self.reconnects = 0

    def _key(self, name: str) -> str:
        return f"{self.prefix}t:{name}"

    def _channel(self, name: str) -> str:
        return f"{self.prefix}c:{name}"

    @property
    def _index(self) -> str:
        return f"{self.prefix}index"

    async def start(self) -> None:
        try:
            await self._redis.ping()
            self.persistence = persistence_of(await self._config())
        except RedisError as exc:
            raise RuntimeError(f"--store {self.url}: Redis does not answer: {exc}") from exc
        if self.persistence is None and not self.ephemeral:
            raise RuntimeError(not_persistent(self.url))
        await self._connect_pubsub()
        self._listener = asyncio.create_task(self._listen(), name="istaka-redis-listener")

    async def _config(self) -> dict[str, str]:
        """``appendonly``, ``appendfsync`` and ``save``; from ``INFO persistence`` where CONFIG is
        refused (managed Redis often renames it)."""
        try:
            return await self._redis.config_get("appendonly", "appendfsync", "save")
        except ResponseError:
            info = await self._redis.info("persistence")
            return {"appendonly": "yes" if info.get("aof_enabled") else "no", "save": ""}

    async def available(self) -> bool:
        try:
            return bool(await asyncio.wait_for(self._redis.ping(), timeout=1.0))
        except (RedisError, OSError, TimeoutError):
            return False

    async def close(self) -> None:
        self._closed = True
        for task in (self._listener, self._catching_up):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        await self._drop_pubsub()
        await self._redis.aclose()

    async def create(self, name: str, *, viewer_key: bool = False) -> Created | None:
        token = new_secret()
        key = new_secret() if viewer_key else None
        args = [
            name,
            digest(token),
            digest(key) if key else "",
            repr(time.time()),
            self.max_tables,
            self.keep_seconds,
            self.prefix,
            _UNWRITTEN,
        ]
        try:
            result = await self._create(keys=[self._key(name), self._index], args=args)
        except RedisError as exc:
            raise unavailable(exc) from exc
        if result == -1:
            raise tables_full(self.max_tables)
        return Created(name, token, key) if result == 1 else None

    async def exists(self, name: str) -> bool:
        try:
            return bool(await self._redis.exists(self._key(name)))
        except RedisError as exc:
            raise unavailable(exc) from exc

    async def authorize(self, name: str, token: str | None) -> None:
        try:
            expected = await self._redis.hget(self._key(name), "token")
        except RedisError as exc:
            raise unavailable(exc) from exc
        if expected is None:
            raise ApiError(404, "no_such_table", f"there is no table {name!r}")
        if not token or digest(token) != expected:
            raise forbidden(name, token)

    async def publish(
        self, name: str, state: dict[str, Any], token: str | None, write: Write = PLAIN_WRITE
    ) -> Snapshot:
        if not token and not write.as_server_owner:
            await self.authorize(name, token)  # 404 or 401, whichever is true
        now = repr(time.time())
        args = [
            digest(token or ""),
            json.dumps(state),
            now,
            name,
            self._channel(name),
            "1" if write.as_server_owner else "0",
            "" if write.expected_version is None else str(write.expected_version),
            write.idempotency_key or "",
            KEPT_KEYS,
        ]
        try:
            status, version = await self._publish(keys=[self._key(name), self._index], args=args)
        except RedisError as exc:
            raise unavailable(exc) from exc
        if status == -1:
            raise ApiError(404, "no_such_table", f"there is no table {name!r}")
        if status == -2:
            raise forbidden(name, token)
        if status == -3:
            assert write.expected_version is not None
            raise version_mismatch(name, write.expected_version, int(version))
        snapshot = {"table": name, "version": int(version), "updated_at": float(now)}
        snapshot["state"] = state
        return {**snapshot, "replayed": True} if status == 1 else snapshot

    async def snapshot(self, name: str, viewer_key: str | None = None) -> Snapshot:
        try:
            fields = await self._redis.hmget(
                self._key(name), ["version", "updated_at", "state", "viewer"]
            )
        except RedisError as exc:
            raise unavailable(exc) from exc
        version, updated_at, state, viewer = fields
        if version is None:
            return empty_snapshot(name)
        check_viewer(name, viewer, viewer_key)
        return {
            "table": name,
            "version": int(version),
            "updated_at": float(updated_at) if updated_at else None,
            "state": json.loads(state) if state else None,
        }

    async def _subscribed(self, name: str) -> None:
        # Waits for Redis to confirm, so the snapshot read next cannot miss a state published in
        # between.  A failure here is the listener's to mend: it subscribes to every watched table
        # again and re-reads them.
        if self._pubsub is None:
            return
        channel = self._channel(name)
        confirmed = self._confirmed[channel] = asyncio.Event()
        with contextlib.suppress(RedisError, OSError, TimeoutError):
            await self._pubsub.subscribe(channel)
            await asyncio.wait_for(confirmed.wait(), timeout=5)
        self._confirmed.pop(channel, None)

    async def _unsubscribed(self, name: str) -> None:
        if self._pubsub is not None:
            with contextlib.suppress(RedisError, OSError):
                await self._pubsub.unsubscribe(self._channel(name))

    async def _connect_pubsub(self) -> None:
        pubsub = self._redis.pubsub()
        # A channel of its own keeps the connection subscribed while no table is watched.
        await pubsub.subscribe(f"{self.prefix}alive")
        # redis-py reconnects a pub/sub connection by itself and subscribes again; this hears of
        # it, to re-read what was published meanwhile.
        pubsub.connection.register_connect_callback(self._reconnected)
        self._pubsub = pubsub
        names = self.fanout.names()
        if names:
            await pubsub.subscribe(*(self._channel(name) for name in names))
        await self._catch_up()

    async def _reconnected(self, connection: Any) -> None:
        self.reconnects += 1
        log.warning("table store: pub/sub reconnected to Redis")
        self._catching_up = asyncio.create_task(self._catch_up())

    async def _catch_up(self) -> None:
        """States published while this worker was not subscribed: re-read each watched table
        (watchers get them unless they have them already)."""
        for name in self.fanout.names():
            with contextlib.suppress(ApiError):
                if await self.exists(name):
                    self.fanout.deliver(await self.snapshot(name))
                else:
                    self.fanout.gone(name, GONE)

    async def _drop_pubsub(self) -> None:
        pubsub, self._pubsub = self._pubsub, None
        if pubsub is not None:
            with contextlib.suppress(RedisError, OSError):
                await pubsub.aclose()

    async def _listen(self) -> None:
        delay = 0.05
        while not self._closed:
            try:
                if self._pubsub is None:
                    await self._connect_pubsub()
                    delay = 0.05
                message = await self._pubsub.get_message(timeout=1.0)
                kind = message.get("type") if message is not None else None
                if kind == "message":
                    self.fanout.deliver(json.loads(message["data"]))
                elif kind == "subscribe" and message["channel"] in self._confirmed:
                    self._confirmed[message["channel"]].set()
            except (RedisError, OSError) as exc:
                log.warning("table store: pub/sub connection lost (%s); reconnecting", exc)
                self.reconnects += 1
                await self._drop_pubsub()
                await asyncio.sleep(delay)
                delay = min(delay * 2, 2.0)
