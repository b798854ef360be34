"""The worker command line (`concierge worker`, `concierge-worker`, any executable built on ConciergeCommandLine's
WorkerMain): a malformed endpoint is a usage error at start (exit 64) that names the endpoint and what a valid one
looks like, never an endless retry; the environment a pool sets is read like the flags."""

from __future__ import annotations

import os
import subprocess

import pytest

import cluster


def slim_worker() -> str:
    return str(cluster.binary().parent / "concierge-worker")


def run(args: list[str], env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    environment = dict(os.environ)
    environment.update(env or {})
    return subprocess.run(args, capture_output=True, text=True, timeout=30, env=environment)


@pytest.mark.parametrize("endpoint", ["127.0.0.1:5556", "tcp://127.0.0.1", "tcp://127.0.0.1:99999", "udp://h:1", "tcp://*:5556"])
@pytest.mark.parametrize("command", ["worker", "slim"])
def test_a_malformed_broker_endpoint_is_a_usage_error_at_start(command, endpoint):
    args = [str(cluster.binary()), "worker"] if command == "worker" else [slim_worker()]
    result = run(args + ["--broker", endpoint])
    assert result.returncode == 64, (result.returncode, result.stderr)
    assert f'"{endpoint}" is not a valid endpoint' in result.stderr
    assert "tcp://HOST:PORT" in result.stderr


def test_the_environment_a_pool_sets_is_checked_like_the_flag():
    result = run([slim_worker()], env={"CONCIERGE_BROKER": "localhost:5556"})
    assert result.returncode == 64, result.stderr
    assert '"localhost:5556" is not a valid endpoint' in result.stderr
    # A flag wins over the environment.
    result = run([slim_worker(), "--broker", "tcp://:1"], env={"CONCIERGE_BROKER": "ipc:///tmp/x"})
    assert result.returncode == 64 and '"tcp://:1" is not a valid endpoint' in result.stderr, result.stderr


def test_the_pool_checks_its_broker_endpoint_too():
    result = run([str(cluster.binary()), "pool", "--broker", "127.0.0.1:5556", "--workers", "1"])
    assert result.returncode == 64, result.stderr
    assert "is not a valid endpoint" in result.stderr
