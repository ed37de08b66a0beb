"""Fixtures of the Debezium tests: the Tansu broker and the Spark session of the TiDB tests."""

from tests.tidb.conftest import kafka_broker  # noqa: F401  (spark: tests/conftest.py)
