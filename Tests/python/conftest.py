"""Fixtures: a session cluster (one broker, a pool of two example workers), clients, and a factory for extra
brokers with special flags, standalone workers and Python workers, all cleaned up even when a test fails."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

import cip  # noqa: E402
import cluster  # noqa: E402


def pytest_configure(config):
    config.addinivalue_line("markers", "chaos: the bounded chaos test of idempotency keys (about 10 s, at most ~60 s); "
                                       "part of the normal run, deselect with -m 'not chaos'")
    config.addinivalue_line("markers", "needs_trait(name): needs a concierge built with that package trait (Tracing, "
                                       "TLS, PostgreSQL; README 'Build options'): skipped with a default build, a "
                                       "failure when CONCIERGE_REQUIRE_TRAITS=1 (Scripts/test sets it)")


_traits: dict[str, bool] | None = None


def built_traits() -> dict[str, bool]:
    """The package traits the binary under test was built with (`concierge version --json`)."""
    global _traits
    if _traits is None:
        out = subprocess.run([str(cluster.binary()), "version", "--json"], capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, out.stderr
        _traits = json.loads(out.stdout)["traits"]
    return _traits


def pytest_runtest_setup(item):
    for mark in item.iter_markers("needs_trait"):
        name = mark.args[0]
        if not built_traits().get(name, False):
            why = f"{cluster.binary()} was built without the {name} trait (build it with --traits {name} or Full)"
            if os.environ.get("CONCIERGE_REQUIRE_TRAITS") == "1":
                pytest.fail(why)
            pytest.skip(why)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    setattr(item, "rep_" + report.when, report)


@pytest.fixture(scope="session")
def run_dir():
    path = Path(tempfile.mkdtemp(prefix="cip-"))  # short: ipc:// paths are limited to ~107 bytes
    yield path
    shutil.rmtree(path, ignore_errors=True)


class Cluster:
    def __init__(self, broker: cluster.Broker, pool: cluster.Proc, workers: set[str], run_dir: Path):
        self.broker = broker
        self.pool = pool
        self.workers = workers
        self.run_dir = run_dir

    @property
    def frontend(self) -> str:
        return self.broker.frontend

    @property
    def backend(self) -> str:
        return self.broker.backend


@pytest.fixture(scope="session")
def main_cluster(run_dir):
    """The broker with default settings and `concierge pool --workers 2` (example handlers)."""
    broker = cluster.Broker("main", run_dir, {})
    pool = None
    try:
        broker.wait_ready()
        pool = cluster.start_pool(broker, run_dir, "main-pool", workers=2)
        workers = cluster.wait_for_workers(broker, 2, procs=[pool])
        yield Cluster(broker, pool, workers, run_dir)
    finally:
        if pool is not None:
            pool.stop()
        broker.stop()


@pytest.fixture
def client(main_cluster):
    c = main_cluster.broker.client()
    yield c
    c.close()


class Spawner:
    """Extra processes and sockets for one test; everything is stopped at the end of the test."""

    counter = 0

    def __init__(self, run_dir: Path, request):
        self.run_dir = run_dir
        self.request = request
        self.procs: list[cluster.Proc] = []
        self.closables: list = []

    def _name(self, kind: str) -> str:
        Spawner.counter += 1
        return f"{kind}{Spawner.counter}"

    def broker(self, wait: bool = True, **flags) -> cluster.Broker:
        """A broker with flags such as max_queued=1, hard_limit_ms=500 (underscores become dashes)."""
        b = cluster.Broker(self._name("b"), self.run_dir, {k.replace("_", "-"): v for k, v in flags.items()})
        b.proc.stop_timeout = 1.0
        self.procs.append(b.proc)
        if wait:
            b.wait_ready()
        return b

    def worker(self, broker: cluster.Broker, name: str | None = None, wait: bool = True, **kw) -> cluster.Proc:
        """A standalone `concierge worker` (example handlers); waits until it answers a request."""
        name = name or self._name("w")
        p = cluster.start_worker(broker, self.run_dir, name, **kw)
        self.procs.append(p)
        if wait:
            cluster.wait_for_workers(broker, {name}, procs=[p])
        return p

    def pool(self, broker: cluster.Broker, workers: int = 2, wait: bool = True, **kw) -> cluster.Proc:
        p = cluster.start_pool(broker, self.run_dir, self._name("pool"), workers=workers, **kw)
        self.procs.append(p)
        if wait:
            cluster.wait_for_workers(broker, workers, procs=[p])
        return p

    def pybroker(self, heartbeat_ms: int = 1000) -> cip.PyBroker:
        """A Python broker backend (cip.PyBroker) on a fresh ipc:// endpoint, for real worker processes."""
        b = cip.PyBroker(f"ipc://{self.run_dir}/{self._name('pyb')}.sock", heartbeat_ms=heartbeat_ms)
        self.closables.append(b)
        return b

    def real_worker(self, pybroker: cip.PyBroker, name: str | None = None, **kw) -> cluster.Proc:
        """A `concierge worker` process (example handlers) connected to a Python broker."""
        kw.setdefault("heartbeat_ms", int(pybroker.interval * 1000))
        p = cluster.start_worker(pybroker.endpoint, self.run_dir, name or self._name("rw"), **kw)
        self.procs.append(p)
        return p

    def client(self, broker_or_endpoint, **kw) -> cip.Client:
        endpoint = broker_or_endpoint if isinstance(broker_or_endpoint, str) else broker_or_endpoint.frontend
        c = cip.Client(endpoint, **kw)
        self.closables.append(c)
        return c

    def pyworker(self, broker_or_endpoint, **kw) -> cip.PyWorker:
        endpoint = broker_or_endpoint if isinstance(broker_or_endpoint, str) else broker_or_endpoint.backend
        if not isinstance(broker_or_endpoint, str):
            kw.setdefault("heartbeat_ms", broker_or_endpoint.heartbeat_ms)
        w = cip.PyWorker(endpoint, **kw)
        self.closables.append(w)
        return w

    def cleanup(self) -> None:
        failed = getattr(self.request.node, "rep_call", None)
        # Processes first (a real worker draining on SIGTERM gets its DRAIN acknowledged by a Python broker), then
        # the Python sockets.
        for p in reversed(self.procs):
            # SIGTERM, then SIGKILL to the group: a worker may be sleeping in a long job, and a broker with requests
            # in flight waits out its 5 s shutdown grace period (8.2), which these tests do not need.
            p.stop(timeout=p.stop_timeout)
        for c in reversed(self.closables):
            c.close()
        if failed is not None and failed.failed:
            for p in self.procs:
                sys.stderr.write(f"\n--- {p.name} (pid {p.pid}) {' '.join(p.args)}\n{p.tail()}\n")


@pytest.fixture
def spawn(run_dir, request):
    s = Spawner(run_dir, request)
    yield s
    s.cleanup()
