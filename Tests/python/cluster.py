"""Real broker, pool and worker processes for the Python tests (the built `concierge` binary).

Every process is started in its own session (process group) and stopped by its pid: SIGTERM, then SIGKILL to its
group after a timeout, so that a pool's worker children never outlive a test run even when the pool is killed.
Endpoints are ipc:// paths in a private temporary directory (no port clashes between parallel runs).
"""

from __future__ import annotations

import atexit
import os
import signal
import subprocess
import time
from pathlib import Path

import cip

REPO = cip.REPO


def binary() -> Path:
    path = Path(os.environ.get("CONCIERGE_BIN", REPO / ".build" / "debug" / "concierge"))
    if not path.is_file() or not os.access(path, os.X_OK):
        raise RuntimeError(f"concierge binary not found at {path}: run Scripts/pytest or set CONCIERGE_BIN")
    return path


_live: dict[int, "Proc"] = {}


@atexit.register
def _kill_leftovers() -> None:
    """Last resort if pytest dies without running fixture teardown: kill the process groups we started."""
    for proc in list(_live.values()):
        proc.kill_group()


class Proc:
    """One child process with its standard error in a log file."""

    def __init__(self, name: str, args: list[str], log_dir: Path):
        self.name = name
        self.args = args
        self.log_path = log_dir / f"{name}.log"
        self.log = open(self.log_path, "wb")
        self.popen = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=self.log, stderr=subprocess.STDOUT,
                                      start_new_session=True)
        self.pid = self.popen.pid
        self.stop_timeout = 3.0  # how long stop() waits after SIGTERM before SIGKILL (in Spawner's cleanup)
        _live[self.pid] = self

    def alive(self) -> bool:
        return self.popen.poll() is None

    def signal(self, sig: int) -> None:
        if self.alive():
            os.kill(self.pid, sig)

    def wait(self, timeout: float) -> int | None:
        try:
            return self.popen.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    def stop(self, timeout: float = 10.0) -> None:
        """SIGTERM (graceful), then SIGKILL to the process group; always reaps."""
        try:
            if self.alive():
                os.kill(self.pid, signal.SIGTERM)
                if self.wait(timeout) is None:
                    self.kill_group()
            self.kill_group()  # children left behind by a process that exited (a pool's workers)
        finally:
            self.popen.wait(5)
            self.log.close()
            _live.pop(self.pid, None)

    def kill_group(self) -> None:
        try:
            os.killpg(self.pid, signal.SIGKILL)  # the group this process leads (start_new_session)
        except (ProcessLookupError, PermissionError):
            pass

    def tail(self, lines: int = 30) -> str:
        try:
            return "\n".join(self.log_path.read_text("utf-8", "replace").splitlines()[-lines:])
        except OSError:
            return ""


class Broker:
    def __init__(self, name: str, run_dir: Path, flags: dict[str, object]):
        self.name = name
        self.frontend = f"ipc://{run_dir}/{name}-fe.sock"
        self.backend = f"ipc://{run_dir}/{name}-be.sock"
        self.flags = dict(flags)
        self.heartbeat_ms = int(flags.get("heartbeat-ms", 1000))
        args = [str(binary()), "broker", "--frontend", self.frontend, "--backend", self.backend,
                "--log-level", str(flags.pop("log-level", "warning"))]
        for key, value in flags.items():
            args += [f"--{key}"] if value is True else [f"--{key}", str(value)]
        self.proc = Proc(name, args, run_dir)
        self.pid = self.proc.pid

    def client(self, **kw) -> cip.Client:
        return cip.Client(self.frontend, **kw)

    def wait_ready(self, timeout: float = 20.0) -> None:
        """PING until PONG (section 4.4)."""
        end = time.monotonic() + timeout
        with self.client() as c:
            while time.monotonic() < end:
                if not self.proc.alive():
                    raise RuntimeError(f"broker {self.name} exited:\n{self.proc.tail()}")
                c.ping()
                try:
                    c.pong(timeout=0.5)
                    return
                except TimeoutError:
                    continue  # the PONG may still come; it is owed
        raise RuntimeError(f"broker {self.name} did not answer PING within {timeout} s:\n{self.proc.tail()}")

    def stop(self) -> None:
        self.proc.stop()


def start_pool(broker: Broker, run_dir: Path, name: str, workers: int = 2, capacity: int = 16,
               heartbeat_ms: int | None = None) -> Proc:
    args = [str(binary()), "pool", "--broker", broker.backend, "--workers", str(workers),
            "--control", f"ipc://{run_dir}/{name}.ctl", "--capacity", str(capacity),
            "--heartbeat-ms", str(heartbeat_ms or broker.heartbeat_ms), "--log-level", "warning"]
    return Proc(name, args, run_dir)


def start_worker(broker: Broker | str, run_dir: Path, name: str, capacity: int = 16,
                 heartbeat_ms: int | None = None, jobs_on: str = "thread") -> Proc:
    """A standalone `concierge worker` with the example handlers, named `name` (its routing id), connected to a
    Broker or to a backend endpoint."""
    endpoint = broker if isinstance(broker, str) else broker.backend
    heartbeat = heartbeat_ms or (1000 if isinstance(broker, str) else broker.heartbeat_ms)
    args = [str(binary()), "worker", "--broker", endpoint, "--name", name, "--capacity", str(capacity),
            "--heartbeat-ms", str(heartbeat), "--jobs-on", jobs_on, "--log-level", "warning"]
    return Proc(name, args, run_dir)


def pool_status(run_dir: Path, name: str) -> str:
    out = subprocess.run([str(binary()), "scale", "--control", f"ipc://{run_dir}/{name}.ctl", "--status"],
                         capture_output=True, text=True, timeout=10)
    return out.stdout + out.stderr


def wait_for_workers(broker: Broker, names: int | set[str], timeout: float = 30.0,
                     procs: list[Proc] = ()) -> set[str]:
    """Send Echo handle requests until `names` distinct workers (a count, or a set of names) have answered."""
    end = time.monotonic() + timeout
    seen: set[str] = set()
    want_count = names if isinstance(names, int) else len(names)
    with broker.client() as c:
        while time.monotonic() < end:
            for p in [broker.proc, *procs]:
                if not p.alive():
                    raise RuntimeError(f"{p.name} exited:\n{p.tail()}")
            # Several at once, so that idle workers share them (least load, ties round-robin: 6.5).
            rids = [c.request("Echo", "handle", cip.interaction("Echo", text="probe")) for _ in range(4)]
            for rid in rids:
                m = c.replies(rid, timeout=10)[-1]
                if m.status == "final":
                    seen.add(m.json["handle"]["data"]["worker"])
                elif m.code not in ("unknown-intent", "busy"):
                    raise RuntimeError(f"probe answered {m}")
            if isinstance(names, int) and len(seen) >= want_count:
                return seen
            if not isinstance(names, int) and names <= seen:
                return seen
            time.sleep(0.1)
    raise RuntimeError(f"only workers {seen} answered within {timeout} s (wanted {names})")
