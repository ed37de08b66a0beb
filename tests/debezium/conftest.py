"""Fixtures of the Debezium tests: the Tansu broker and the Spark session of the TiDB tests."""

from tests.tidb.conftest import kafka_broker, spark  # noqa: F401
