"""Fixtures for the experiments' tests (tests/conftest.py is not loaded here)."""

from __future__ import annotations

import os
import random

import pytest

SEED = int(os.environ.get("CUZK_TEST_SEED") or int.from_bytes(os.urandom(8), "little"))


def pytest_report_header() -> str:
    return f"cuzk experiments seed: {SEED} (replay with CUZK_TEST_SEED={SEED})"


@pytest.fixture
def rng(request: pytest.FixtureRequest) -> random.Random:
    """Per-test RNG derived from the session seed and the test id."""
    return random.Random(f"{SEED}-{request.node.nodeid}")
