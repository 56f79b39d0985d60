"""The table store's contract, run against both stores: ``MemoryStore`` and ``RedisStore`` on a
real ``redis-server`` started for this module.  Owners and tokens, versions, fan-out to watchers in
order, eviction that never fails and keeps recently written tables, and (Redis only) two stores
sharing one server as two workers do, through a Redis restart."""

from __future__ import annotations

import asyncio
import itertools
import subprocess
from collections.abc import Iterator

import pytest
from conftest_service import redis_server, restart_redis

from service.errors import ApiError
from service.store import MemoryStore, TableStore, Watch, Write, make_store

_prefixes = itertools.count()


@pytest.fixture(scope="module")
def redis_url() -> Iterator[str]:
    with redis_server() as url:
        yield url


def new_store(kind: str, redis_url: str | None, **kwargs: float) -> TableStore:
    if kind == "memory":
        return MemoryStore(**kwargs)
    from service.store_redis import RedisStore

    assert redis_url is not None
    # A key prefix of its own per test: the tests share one server.
    return RedisStore(redis_url, prefix=f"test{next(_prefixes)}:", **kwargs)


@pytest.fixture(params=["memory", "redis"])
def kind(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def make(kind: str, request: pytest.FixtureRequest):  # noqa: ANN201 - a factory
    url = request.getfixturevalue("redis_url") if kind == "redis" else None

    def factory(**kwargs: float) -> TableStore:
        return new_store(kind, url, **kwargs)

    return factory


def run(coro):  # noqa: ANN001, ANN201
    return asyncio.run(asyncio.wait_for(coro, timeout=60))


async def started(store: TableStore) -> TableStore:
    await store.start()
    return store


async def next_state(watch: Watch) -> dict:
    return await asyncio.wait_for(watch.next(), timeout=30)


def test_create_gives_a_token_once_and_writes_need_it(make) -> None:  # noqa: ANN001
    async def scenario() -> None:
        store = await started(make())
        try:
            created = await store.create("finals")
            assert created is not None and created.token
            assert await store.create("finals") is None  # taken: no second token
            assert await store.exists("finals") and not await store.exists("other")
            with pytest.raises(ApiError) as missing:
                await store.publish("finals", {"n": 1}, None)
            assert (missing.value.status, missing.value.code) == (401, "token_required")
            with pytest.raises(ApiError) as wrong:
                await store.publish("finals", {"n": 1}, created.token + "x")
            assert (wrong.value.status, wrong.value.code) == (403, "wrong_token")
            with pytest.raises(ApiError) as unknown:
                await store.publish("nowhere", {"n": 1}, created.token)
            assert unknown.value.status == 404
            assert (await store.snapshot("finals"))["version"] == 0
            snapshot = await store.publish("finals", {"n": 1}, created.token)
            assert snapshot["version"] == 1 and snapshot["state"] == {"n": 1}
            await store.authorize("finals", created.token)
            read = await store.snapshot("finals")
            assert read["version"] == 1 and read["state"] == {"n": 1} and read["updated_at"]
        finally:
            await store.close()

    run(scenario())


def test_unknown_tables_read_as_empty_and_are_not_created(make) -> None:  # noqa: ANN001
    async def scenario() -> None:
        store = await started(make())
        try:
            snapshot = await store.snapshot("ghost")
            assert snapshot == {"table": "ghost", "version": 0, "updated_at": None, "state": None}
            async with store.watch("ghost") as watch:
                assert (await next_state(watch))["version"] == 0
            assert not await store.exists("ghost")
        finally:
            await store.close()

    run(scenario())


def test_viewer_key_guards_reading(make) -> None:  # noqa: ANN001
    async def scenario() -> None:
        store = await started(make())
        try:
            created = await store.create("private", viewer_key=True)
            assert created is not None and created.viewer_key
            await store.publish("private", {"n": 1}, created.token)
            with pytest.raises(ApiError) as refused:
                await store.snapshot("private")
            assert refused.value.code == "viewer_key_required"
            assert (await store.snapshot("private", created.viewer_key))["version"] == 1
            with pytest.raises(ApiError):
                async with store.watch("private", "wrong"):
                    pass
        finally:
            await store.close()

    run(scenario())


def test_watchers_see_every_version_in_order(make) -> None:  # noqa: ANN001
    async def scenario() -> list[list[int]]:
        store = await started(make())
        try:
            created = await store.create("live")
            assert created is not None
            seen: list[list[int]] = []
            async with store.watch("live") as one, store.watch("live") as two:
                for watch in (one, two):
                    assert (await next_state(watch))["version"] == 0
                for n in range(20):
                    await store.publish("live", {"n": n}, created.token)
                for watch in (one, two):
                    versions = []
                    while not versions or versions[-1] < 20:
                        versions.append((await next_state(watch))["version"])
                    seen.append(versions)
            return seen
        finally:
            await store.close()

    assert run(scenario()) == [list(range(1, 21))] * 2


def test_a_slow_watcher_skips_the_oldest_and_never_goes_back(make) -> None:  # noqa: ANN001
    async def scenario() -> list[int]:
        store = await started(make())
        try:
            created = await store.create("busy")
            assert created is not None
            async with store.watch("busy") as watch:
                await next_state(watch)
                for n in range(100):
                    await store.publish("busy", {"n": n}, created.token)
                versions = []
                while not versions or versions[-1] < 100:
                    versions.append((await next_state(watch))["version"])
                return versions
        finally:
            await store.close()

    versions = run(scenario())
    assert versions == sorted(set(versions)) and versions[-1] == 100
    assert len(versions) < 100  # the oldest were skipped, not queued without end


def test_eviction_never_fails_and_keeps_recent_writes(make) -> None:  # noqa: ANN001
    # The old hub evicted the table it had just added and then raised KeyError (a 500) once
    # every table was watched; and junk names evicted a real table.
    async def scenario() -> None:
        store = await started(make(max_tables=3, keep_seconds=600))
        try:
            real = await store.create("real")
            assert real is not None
            await store.publish("real", {"hand": "mine"}, real.token)
            for n in range(50):  # junk tables, never written: they evict each other
                assert await store.create(f"junk{n}") is not None
            assert (await store.snapshot("real"))["state"] == {"hand": "mine"}
            # Written junk is recent too: once every table was written recently, creating
            # another is refused with a named 503, and nothing is evicted.
            for n in range(50, 52):
                junk = await store.create(f"junk{n}")
                assert junk is not None
                await store.publish(f"junk{n}", {"n": n}, junk.token)
            with pytest.raises(ApiError) as full:
                await store.create("one-more")
            assert (full.value.status, full.value.code) == (503, "tables_full")
            assert (await store.snapshot("real"))["version"] == 1
            await store.publish("real", {"hand": "still mine"}, real.token)
        finally:
            await store.close()

    run(scenario())


def test_old_writes_are_evicted_oldest_first(make) -> None:  # noqa: ANN001
    async def scenario() -> None:
        store = await started(make(max_tables=2, keep_seconds=0.01))
        try:
            for name in ("first", "second"):
                created = await store.create(name)
                assert created is not None
                await store.publish(name, {"name": name}, created.token)
                await asyncio.sleep(0.05)
            assert await store.create("third") is not None
            assert not await store.exists("first")
            assert await store.exists("second") and await store.exists("third")
        finally:
            await store.close()

    run(scenario())


def test_watched_tables_are_kept_in_memory() -> None:
    async def scenario() -> None:
        store = MemoryStore(max_tables=2, keep_seconds=0.001)
        for name in ("a", "b"):
            created = await store.create(name)
            assert created is not None
            await store.publish(name, {}, created.token)
        await asyncio.sleep(0.01)
        async with store.watch("a"), store.watch("b"):
            with pytest.raises(ApiError) as full:
                await store.create("c")
            assert full.value.code == "tables_full"
        assert await store.create("c") is not None

    run(scenario())


def test_an_idempotency_key_applies_a_write_once(make) -> None:  # noqa: ANN001
    async def scenario() -> None:
        store = await started(make())
        try:
            created = await store.create("retried")
            assert created is not None
            once = Write(idempotency_key="k-1")
            first = await store.publish("retried", {"n": 1}, created.token, once)
            again = await store.publish("retried", {"n": 1}, created.token, once)
            assert (first["version"], again["version"]) == (1, 1)
            assert again["replayed"] and not first.get("replayed")
            assert (await store.snapshot("retried"))["version"] == 1  # applied once
            other = await store.publish(
                "retried", {"n": 2}, created.token, Write(idempotency_key="k-2")
            )
            assert other["version"] == 2
            # A replay still needs the table's token.
            with pytest.raises(ApiError) as wrong:
                await store.publish("retried", {"n": 1}, "guess", once)
            assert wrong.value.status == 403
        finally:
            await store.close()

    run(scenario())


def test_if_match_writes_only_onto_the_expected_version(make) -> None:  # noqa: ANN001
    async def scenario() -> None:
        store = await started(make())
        try:
            created = await store.create("cas")
            assert created is not None
            assert (await store.publish("cas", {"n": 1}, created.token, Write(expected_version=0)))[
                "version"
            ] == 1
            with pytest.raises(ApiError) as stale:
                await store.publish("cas", {"n": 2}, created.token, Write(expected_version=0))
            assert (stale.value.status, stale.value.code) == (412, "version_mismatch")
            assert stale.value.details["version"] == 1
            assert (await store.snapshot("cas"))["state"] == {"n": 1}
        finally:
            await store.close()

    run(scenario())


def test_the_server_owner_writes_any_table_without_its_token(make) -> None:  # noqa: ANN001
    async def scenario() -> None:
        store = await started(make())
        try:
            assert await store.create("owned") is not None
            owner = Write(as_server_owner=True)
            assert (await store.publish("owned", {"n": 1}, "owner-token", owner))["version"] == 1
            with pytest.raises(ApiError) as missing:
                await store.publish("nowhere", {"n": 1}, "owner-token", owner)
            assert missing.value.status == 404  # writing is not creating
        finally:
            await store.close()

    run(scenario())


def test_a_redis_that_keeps_nothing_is_refused_unless_ephemeral() -> None:
    from service.store_redis import RedisStore

    async def scenario(url: str) -> None:
        with pytest.raises(RuntimeError, match="appendonly yes"):
            await RedisStore(url).start()
        store = await started(RedisStore(url, ephemeral=True))
        assert store.persistence is None and await store.available()
        await store.close()

    with redis_server(persistent=False) as url:
        run(scenario(url))

    async def persistence(url: str) -> str | None:
        store = await started(RedisStore(url))
        await store.close()
        return store.persistence

    with redis_server() as url:
        assert "appendfsync always" in (run(persistence(url)) or "")
    with redis_server("--save", "60 1", persistent=False) as url:
        assert "RDB" in (run(persistence(url)) or "")


def test_watchers_hear_gone_when_redis_loses_the_table() -> None:
    # Overlays kept showing a table that an empty, restarted Redis no longer had.
    from service.store_redis import RedisStore

    with redis_server(persistent=False) as url:
        port = int(url.rsplit(":", 1)[1].split("/")[0])
        restarted: list[subprocess.Popen[bytes]] = []

        async def scenario() -> list[dict]:
            store = await started(RedisStore(url, ephemeral=True))
            try:
                created = await store.create("lost")
                assert created is not None
                async with store.watch("lost") as watch:
                    await next_state(watch)
                    await store.publish("lost", {"n": 1}, created.token)
                    assert (await next_state(watch))["version"] == 1
                    restarted.append(await _restart_redis(port, persistent=False))
                    gone = await next_state(watch)
                    assert not await store.available() or not await store.exists("lost")
                    # Made again, the table starts at version 1 and the watcher takes it.
                    again = await store.create("lost")
                    assert again is not None
                    await store.publish("lost", {"n": 2}, again.token)
                    return [gone, await next_state(watch)]
            finally:
                await store.close()

        try:
            gone, fresh = run(scenario())
        finally:
            for process in restarted:
                process.terminate()
                process.wait(timeout=30)
    assert gone["gone"] and gone["state"] is None and "lost" in gone["message"].lower()
    assert (fresh["version"], fresh["state"]) == (1, {"n": 2})


def test_make_store_names_bad_urls() -> None:
    assert isinstance(make_store(None, 10, 1), MemoryStore)
    with pytest.raises(ValueError, match="redis://"):
        make_store("mysql://x", 10, 1)


def test_two_workers_share_tables_through_redis(redis_url: str) -> None:
    from service.store_redis import RedisStore

    async def scenario() -> list[int]:
        one = await started(RedisStore(redis_url, prefix="shared:"))
        two = await started(RedisStore(redis_url, prefix="shared:"))
        try:
            created = await one.create("club")
            assert created is not None
            assert await two.create("club") is None
            async with two.watch("club") as watch:
                await next_state(watch)
                for n in range(10):
                    await (one if n % 2 else two).publish("club", {"n": n}, created.token)
                versions = []
                while not versions or versions[-1] < 10:
                    versions.append((await next_state(watch))["version"])
            return versions
        finally:
            await one.close()
            await two.close()

    assert run(scenario()) == list(range(1, 11))


def test_redis_restart_loses_nothing_acknowledged_and_watchers_catch_up() -> None:
    from service.store_redis import RedisStore

    with redis_server() as url:
        port = int(url.rsplit(":", 1)[1].split("/")[0])

        restarted: list[subprocess.Popen[bytes]] = []

        async def scenario() -> tuple[int, int]:
            store = await started(RedisStore(url))
            try:
                created = await store.create("durable")
                assert created is not None
                async with store.watch("durable") as watch:
                    await next_state(watch)
                    for n in range(5):
                        await store.publish("durable", {"n": n}, created.token)
                    restarted.append(await _restart_redis(port))
                    # Acknowledged writes survived; the watcher resubscribed by itself.
                    assert (await store.snapshot("durable"))["version"] == 5
                    await store.publish("durable", {"n": 5}, created.token)
                    versions = []
                    while not versions or versions[-1] < 6:
                        versions.append((await next_state(watch))["version"])
                return versions[-1], store.reconnects
            finally:
                await store.close()

        try:
            last, reconnects = run(scenario())
        finally:
            for process in restarted:
                process.terminate()
                process.wait(timeout=30)
    assert last == 6 and reconnects >= 1


async def _restart_redis(port: int, *, persistent: bool = True) -> subprocess.Popen[bytes]:
    return await asyncio.to_thread(restart_redis, port, persistent=persistent)
