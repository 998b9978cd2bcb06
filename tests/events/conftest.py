"""Fixtures for events tests: a real HTTP receiver process and a repo with `events:` sinks."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers.events import Receiver
from tests.helpers.servers import free_port


@pytest.fixture
def receiver(tmp_path: Path) -> Iterator[Receiver]:
    rec = Receiver(free_port(), tmp_path / "received.jsonl")
    rec.start()
    yield rec
    rec.stop()


