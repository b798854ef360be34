"""Concierge's container image (Deploy/container), built here without any image registry and run.

The image is built once for the module by Deploy/container/build-image.sh from the binary under test (CONCIERGE_BIN;
a debug binary: the script copies its Swift runtime libraries into the image), on a Debian root filesystem that
debootstrap makes from Debian's packages. Podman runs with runc (crun fails on this machine kind: cgroups in hybrid
mode), explicit --ulimit values, and a private storage root under a temporary directory, removed at the end. The
containers use the host's network and bind loopback on ports the test picks; requests come from the host, with
`concierge send` and the Python client.

Needs root, podman, runc and debootstrap (Scripts/setup installs them). A missing tool fails the module; it is never
skipped on CI. CONCIERGE_ROOTFS_CACHE=DIR keeps the base root filesystem between runs (debootstrap, about 30 s to
2 min, dominates the module's time); CONCIERGE_SKIP_CONTAINER_TESTS=1 skips the module on a machine without root.
"""

from __future__ import annotations

import json
import os
import re
import resource
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

import cip
import cluster
from cip import interaction

BUILD_SCRIPT = cip.REPO / "Deploy" / "container" / "build-image.sh"
IMAGE = "localhost/concierge:test"
BUILD_TIMEOUT = 900  # debootstrap downloads ~40 MB of packages; a slow mirror is the long pole


def free_port() -> int:
    """An ephemeral loopback port, free when picked (the containers bind it moments later)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def ulimit_flags() -> list[str]:
    """Explicit limits within the test's own hard limits: podman's defaults (nofile 1048576) exceed them here and
    runc then fails to start the container."""
    flags = []
    for name, limit, cap in (("nofile", resource.RLIMIT_NOFILE, 65536), ("nproc", resource.RLIMIT_NPROC, 4096)):
        hard = resource.getrlimit(limit)[1]
        value = cap if hard == resource.RLIM_INFINITY else min(hard, cap)
        flags += ["--ulimit", f"{name}={value}:{value}"]
    return flags


class Podman:
    """podman with runc and a private storage root: the same options build-image.sh uses for CONCIERGE_PODMAN_ROOT."""

    def __init__(self, root: Path):
        self.root = root
        self.command = ["podman", "--runtime", "runc", "--root", str(root / "storage"), "--runroot",
                        str(root / "run"), "--tmpdir", str(root / "tmp"), "--events-backend", "file"]

    def __call__(self, *args: str, timeout: float = 60, check: bool = True) -> subprocess.CompletedProcess:
        out = subprocess.run([*self.command, *args], capture_output=True, text=True, timeout=timeout)
        if check and out.returncode != 0:
            raise AssertionError(f"podman {' '.join(args)} exited {out.returncode}:\n{out.stdout}{out.stderr}")
        return out

    def logs(self, name: str) -> str:
        out = self("logs", name, check=False)
        return out.stdout + out.stderr

    def state(self, name: str) -> tuple[str, int]:
        """(status, exit code) of a container: running, exited..."""
        out = self("inspect", "--format", "{{.State.Status}} {{.State.ExitCode}}", name)
        status, code = out.stdout.split()
        return status, int(code)

    def wait_log(self, name: str, pattern: str, count: int = 1, timeout: float = 60) -> str:
        """Wait until `pattern` (a regular expression) matches `count` lines of the container's log; fail at once if
        the container exits first."""
        end = time.monotonic() + timeout
        while True:
            logs = self.logs(name)
            if len(re.findall(pattern, logs, re.MULTILINE)) >= count:
                return logs
            status, code = self.state(name)
            if status != "running":
                raise AssertionError(f"container {name} is {status} (exit code {code}) before logging "
                                     f"{pattern!r}:\n{logs}")
            if time.monotonic() > end:
                raise AssertionError(f"container {name} did not log {pattern!r} ({count}x) within {timeout} s:\n{logs}")
            time.sleep(0.2)

    def cleanup(self) -> None:
        """Remove every container and image of the private root, then the root itself."""
        self("rm", "--force", "--all", "--time", "2", check=False, timeout=120)
        self("rmi", "--force", "--all", check=False, timeout=120)
        shutil.rmtree(self.root, ignore_errors=True)


class Built:
    def __init__(self, podman: Podman, seconds: float, size_mb: int, log: str):
        self.podman = podman
        self.seconds = seconds
        self.size_mb = size_mb
        self.log = log


@pytest.fixture(scope="module")
def image():
    if os.environ.get("CONCIERGE_SKIP_CONTAINER_TESTS") == "1":
        pytest.skip("CONCIERGE_SKIP_CONTAINER_TESTS=1")
    missing = [tool for tool in ("podman", "runc", "debootstrap") if shutil.which(tool) is None]
    if missing:
        pytest.fail(f"the container tests need {', '.join(missing)}: run Scripts/setup (it installs podman, runc and "
                    f"debootstrap)", pytrace=False)
    if os.geteuid() != 0:
        pytest.fail("the container tests need root (debootstrap, podman's storage): run them as root, or set "
                    "CONCIERGE_SKIP_CONTAINER_TESTS=1 on a development machine without it", pytrace=False)
    root = Path(tempfile.mkdtemp(prefix="ctr-"))  # short: conmon's socket paths live under it
    podman = Podman(root)
    env = dict(os.environ, CONCIERGE_PODMAN_ROOT=str(root))
    start = time.monotonic()
    try:
        out = subprocess.run([str(BUILD_SCRIPT), str(cluster.binary()), IMAGE], capture_output=True, text=True,
                             env=env, timeout=BUILD_TIMEOUT)
        seconds = time.monotonic() - start
        if out.returncode != 0:
            pytest.fail(f"{BUILD_SCRIPT.name} exited {out.returncode}:\n{out.stdout}{out.stderr}", pytrace=False)
        size = int(podman("image", "inspect", "--format", "{{.Size}}", IMAGE).stdout.strip())
        yield Built(podman, seconds, size // 1_000_000, out.stderr)
    finally:
        podman.cleanup()


@pytest.fixture
def containers(image, request):
    """Names of the containers a test starts: removed at its end, their logs shown if it failed."""
    names: list[str] = []
    yield names
    failed = getattr(request.node, "rep_call", None)
    for name in reversed(names):
        if failed is not None and failed.failed:
            print(f"\n--- container {name}\n{image.podman.logs(name)[-4000:]}")
        image.podman("rm", "--force", "--time", "2", name, check=False, timeout=60)


def run_container(image: Built, containers: list[str], name: str, *args: str) -> None:
    """A detached container on the host's network (it binds loopback) running `concierge ARGS`; podman's own
    options come first, before `--`."""
    options, arguments = (args[:args.index("--")], args[args.index("--") + 1:]) if "--" in args else ((), args)
    image.podman("run", "--detach", "--name", name, "--network", "host", *ulimit_flags(), *options, IMAGE,
                 *arguments)
    containers.append(name)


def send(frontend: str, intent: dict) -> dict:
    """`concierge send` from the host; the last line is the final reply."""
    out = subprocess.run([str(cluster.binary()), "send", "--broker", frontend, "--timeout", "30", json.dumps(intent)],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, f"concierge send exited {out.returncode}:\n{out.stdout}{out.stderr}"
    return json.loads(out.stdout.splitlines()[-1])


def test_image_runs_concierge_as_an_unprivileged_user(image, capsys):
    with capsys.disabled():
        print(f"\ncontainer: image built in {image.seconds:.0f} s, {image.size_mb} MB\n{image.log.rstrip()}")
    config = json.loads(image.podman("image", "inspect", "--format", "{{json .Config}}", IMAGE).stdout)
    assert config["Entrypoint"] == ["concierge"]
    assert config["User"] == "10001:10001"
    assert {"5555/tcp", "5556/tcp"} <= set(config.get("ExposedPorts", {}))
    # The label names the package traits of the binary inside (README "Build options"), as the binary reports them.
    built = json.loads(subprocess.run([str(cluster.binary()), "version", "--json"], capture_output=True, text=True,
                                      timeout=60, check=True).stdout)["traits"]
    assert config["Labels"]["io.concierge.traits"] == (",".join(sorted(k for k, v in built.items() if v)) or "none")
    # The entry point runs (every library it loads is in the image), as that user.
    out = image.podman("run", "--rm", *ulimit_flags(), IMAGE, "--help")
    assert "concierge <subcommand>" in out.stdout
    out = image.podman("run", "--rm", *ulimit_flags(), "--entrypoint", "id", IMAGE, "-u")
    assert out.stdout.strip() == "10001"


def test_broker_pool_and_worker_containers_serve_the_host_and_stop_cleanly_on_sigterm(image, containers, capsys):
    started = time.monotonic()
    podman = image.podman
    frontend, backend = f"tcp://127.0.0.1:{free_port()}", f"tcp://127.0.0.1:{free_port()}"
    # The broker's journal on a named volume at the unprivileged user's home, created once as Docs/OPERATIONS.md says.
    journal = "/var/lib/concierge/journal.sqlite"
    podman("run", "--rm", "--volume", "journal:/var/lib/concierge", *ulimit_flags(), IMAGE, "journal", "init", journal)
    run_container(image, containers, "broker", "--volume", "journal:/var/lib/concierge", "--", "broker",
                  "--frontend", frontend, "--backend", backend, "--journal", journal, "--result-ttl", "3600")
    podman.wait_log("broker", r"broker ready")
    run_container(image, containers, "pool", "pool", "--broker", backend, "--workers", "2")
    run_container(image, containers, "worker", "worker", "--broker", backend, "--name", "box-worker")
    workers = {"pool-0", "pool-1", "box-worker"}
    for worker in workers:
        podman.wait_log("broker", rf"worker={re.escape(worker)} .*worker registered")
    for worker in ("pool-0", "pool-1"):
        assert re.search(rf"worker={worker} .*worker registering", podman.logs("pool")), podman.logs("pool")
    ready = time.monotonic() - started

    # `concierge send` on the host: the whole lifecycle (resolve, confirm, handle) through the containers.
    reply = send(frontend, {"type": "Echo", "parameters": {"text": "from the host"}})
    assert reply["status"] == "final", reply
    assert reply["body"]["handle"]["code"] == "success", reply
    assert reply["body"]["handle"]["data"]["text"] == "from the host"
    assert reply["body"]["handle"]["data"]["worker"] in workers

    # The Python client (Schemas/ alone): concurrent requests spread over the three workers (least load, ties
    # round-robin), every one ends with its final reply.
    seen: set[str] = set()
    with cip.Client(frontend) as c:
        rids = [c.request("Echo", "handle", interaction("Echo", text=f"n{i}", delayMs=100), deadline=10000)
                for i in range(30)]
        for i, rid in enumerate(rids):
            m = c.replies(rid, timeout=30)[-1]
            assert m.status == "final", m
            data = m.json["handle"]["data"]
            assert data["text"] == f"n{i}"
            seen.add(data["worker"])
    assert seen == workers

    # SIGTERM (podman stop): each drains and exits 0 well before the SIGKILL podman would send after 30 s.
    podman("stop", "--time", "30", "pool", timeout=90)
    assert podman.state("pool") == ("exited", 0), podman.logs("pool")
    pool_logs = podman.logs("pool")
    assert "pool stopping; workers drain" in pool_logs
    assert len(re.findall(r"status=exited\(0\) .*worker stopped", pool_logs)) == 2, pool_logs
    podman("stop", "--time", "30", "worker", timeout=90)
    assert podman.state("worker") == ("exited", 0), podman.logs("worker")
    assert "worker stopped" in podman.logs("worker")
    podman.wait_log("broker", r"worker=box-worker .*worker left")
    podman("stop", "--time", "30", "broker", timeout=90)
    assert podman.state("broker") == ("exited", 0), podman.logs("broker")
    broker_logs = podman.logs("broker")
    assert "broker shutting down" in broker_logs
    assert "broker stopped" in broker_logs
    # The journal on the volume recorded the 31 requests, ended (their results kept for STATUS for an hour).
    out = podman("run", "--rm", "--volume", "journal:/var/lib/concierge", *ulimit_flags(), IMAGE, "journal", "check",
                 journal)
    check = out.stdout + out.stderr
    assert ": ok " in check and "requests open: 0 " in check and "results: 31\n" in check, check
    with capsys.disabled():
        print(f"\ncontainer: broker, pool (2 workers) and a worker ready in {ready:.1f} s; "
              f"whole test {time.monotonic() - started:.1f} s")
