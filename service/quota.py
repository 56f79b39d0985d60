"""Quotas on kept data: the photos and tiles kept with consent (``vision.profiles.DataStore``) and
the profiles made by calibration, in bytes and in files, for the whole server and for each
credential (the server owner's token, or one table's).

Before a write, the folders are measured (under a file lock, so every worker process sees the
others' writes): past ``max_kept_bytes`` or ``max_kept_files`` the write is refused with 507
``storage_full``; past the credential's ``max_kept_bytes_per_token`` or
``max_kept_files_per_token``, with 429 ``quota_exceeded``.  What each write added is appended to
``usage.jsonl`` in the data folder, under the first 16 hex digits of the credential's SHA-256 (the
token itself is never written).  ``istaka data list`` and ``GET /api/v1/data`` show the usage.

>>> Usage(3 * 1024 * 1024, 2).text()
'3.0 MB in 2 files'
"""

from __future__ import annotations

import fcntl
import json
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from service.errors import ApiError
from service.settings import MB, Settings
from service.store import digest

LEDGER = "usage.jsonl"
LOCK = ".quota.lock"
FILES_PER_KEEP = 2  # a kept photo and its label file (records.jsonl grows, it is not new)


@dataclass(frozen=True)
class Usage:
    bytes: int = 0
    files: int = 0

    def text(self) -> str:
        return f"{self.bytes / MB:.1f} MB in {self.files} files"

    def plus(self, other: Usage) -> Usage:
        return Usage(self.bytes + other.bytes, self.files + other.files)


def kept_folders() -> tuple[Path, Path]:
    """The data folder and the profiles folder (``vision.profiles``)."""
    from vision.profiles import data_dir, profiles_dir

    return data_dir(), profiles_dir()


def folder_usage(*folders: Path) -> Usage:
    """Bytes and files under ``folders`` (the quota's bookkeeping files left out)."""
    total, count = 0, 0
    for folder in folders:
        for root, _, names in os.walk(folder):
            for name in names:
                if name in (LEDGER, LOCK):
                    continue
                try:
                    total += (Path(root) / name).stat().st_size
                except FileNotFoundError:
                    continue  # deleted meanwhile
                count += 1
    return Usage(total, count)


def who(token: str) -> str:
    """The name a credential's usage is kept under: never the token itself."""
    return digest(token)[:16]


def usage_by_credential(data: Path) -> dict[str, Usage]:
    """What each credential kept, from the ledger."""
    path = data / LEDGER
    out: dict[str, Usage] = {}
    if not path.is_file():
        return out
    for line in path.read_text().splitlines():
        if line.strip():
            entry = json.loads(line)
            out[entry["who"]] = out.get(entry["who"], Usage()).plus(
                Usage(entry["bytes"], entry["files"])
            )
    return out


def report(settings: Settings) -> dict[str, Any]:
    """The usage against the quotas, as JSON values (``GET /data``, ``istaka data list``)."""
    data, profiles = kept_folders()
    total = folder_usage(data, profiles)
    return {
        "bytes": total.bytes,
        "files": total.files,
        "max_bytes": settings.max_kept_bytes,
        "max_files": settings.max_kept_files,
        "max_bytes_per_token": settings.max_kept_bytes_per_token,
        "max_files_per_token": settings.max_kept_files_per_token,
        "by_credential": {
            name: {"bytes": u.bytes, "files": u.files}
            for name, u in sorted(usage_by_credential(data).items())
        },
    }


class Quota:
    """The quotas of one server (``Settings``)."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings

    def check(self, token: str, incoming: int, files: int = FILES_PER_KEEP) -> None:
        """``ApiError`` 507 or 429 if ``incoming`` more bytes in ``files`` more files would pass a
        quota (before the work: a request that cannot be kept is refused at once)."""
        data, profiles = kept_folders()
        self._check(
            folder_usage(data, profiles), usage_by_credential(data).get(who(token)), incoming, files
        )

    def _check(self, total: Usage, mine: Usage | None, incoming: int, files: int) -> None:
        s = self.settings
        if total.bytes + incoming > s.max_kept_bytes or total.files + files > s.max_kept_files:
            raise ApiError(
                507,
                "storage_full",
                f"the server's kept data is full ({total.text()}; max_kept_bytes"
                f" {s.max_kept_bytes / MB:g} MB, max_kept_files {s.max_kept_files}):"
                " istaka data forget frees it",
            )
        mine = mine or Usage()
        if (
            mine.bytes + incoming > s.max_kept_bytes_per_token
            or mine.files + files > s.max_kept_files_per_token
        ):
            raise ApiError(
                429,
                "quota_exceeded",
                f"this credential kept {mine.text()} already (max_kept_bytes_per_token"
                f" {s.max_kept_bytes_per_token / MB:g} MB, max_kept_files_per_token"
                f" {s.max_kept_files_per_token})",
            )

    @contextmanager
    def writing(self, token: str, incoming: int, files: int = FILES_PER_KEEP) -> Iterator[None]:
        """Checked again under the lock, then the write runs and what it added is recorded."""
        data, profiles = kept_folders()
        data.mkdir(parents=True, exist_ok=True)
        with (data / LOCK).open("a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # the workers of one server write one at a time
            before = folder_usage(data, profiles)
            self._check(before, usage_by_credential(data).get(who(token)), incoming, files)
            yield
            after = folder_usage(data, profiles)
            added = {
                "who": who(token),
                "bytes": max(0, after.bytes - before.bytes),
                "files": max(0, after.files - before.files),
                "time": time.strftime("%Y-%m-%dT%H:%M:%S"),
            }
            with (data / LEDGER).open("a") as ledger:
                ledger.write(json.dumps(added) + "\n")
