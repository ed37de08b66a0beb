"""Fixtures of the PostgreSQL capture tests: ``capdb`` — a fresh database on the session's
PostgreSQL 15 with the ddlcore event triggers and a publication ``pub``."""

from __future__ import annotations

import pytest

from .support import create_capture_db, drop_capture_db


@pytest.fixture
def capdb(postgres):
    pytest.importorskip("psycopg2", reason="the capture extra (psycopg2) is not installed")
    db = create_capture_db(postgres)
    try:
        yield db
    finally:
        drop_capture_db(db)
