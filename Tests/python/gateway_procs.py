"""`concierge gateway` processes for the gateway tests: started next to a broker, their port read from their log."""

from __future__ import annotations

import contextlib
import re
import time
from pathlib import Path

import httpx

import cluster

_READY = re.compile(r"gateway ready http=(\S+):(\d+) scheme=(https?)")


class Gateway:
    """A `concierge gateway` on 127.0.0.1 (an ephemeral port) for `frontend`; `flags` are added as given."""

    def __init__(self, name: str, run_dir: Path, frontend: str, *flags: str, heartbeat_ms: int = 1000):
        args = [str(cluster.binary()), "gateway", "--broker", frontend, "--listen", "127.0.0.1:0",
                "--heartbeat-ms", str(heartbeat_ms), "--log-level", "info", *flags]
        self.proc = cluster.Proc(name, args, run_dir)
        self.proc.stop_timeout = 5.0
        self.url = ""
        self.port = 0
        self.frontend = frontend

    def wait_ready(self, timeout: float = 20.0, broker: bool = True) -> "Gateway":
        """Until the log says `gateway ready` (with its port), then (with `broker`) until /readyz answers 200."""
        end = time.monotonic() + timeout
        while time.monotonic() < end and not self.url:
            if not self.proc.alive():
                raise RuntimeError(f"gateway exited:\n{self.proc.tail()}")
            match = _READY.search(self.proc.log_path.read_text("utf-8", "replace"))
            if match:
                self.port = int(match.group(2))
                self.url = f"{match.group(3)}://127.0.0.1:{self.port}"
                break
            time.sleep(0.05)
        if not self.url:
            raise RuntimeError(f"gateway not ready within {timeout} s:\n{self.proc.tail()}")
        if self.url.startswith("http:") and broker:
            while time.monotonic() < end:
                if httpx.get(self.url + "/readyz", timeout=2).status_code == 200:
                    return self
                time.sleep(0.05)
            raise RuntimeError(f"gateway /readyz not 200 within {timeout} s:\n{self.proc.tail()}")
        return self

    def stop(self) -> None:
        self.proc.stop(timeout=self.proc.stop_timeout)


def echo(text: str = "hi", **parameters) -> dict:
    """An Interaction for the example Echo intent (delayMs, delayPhase, failWith, ...)."""
    return {"intent": {"type": "Echo", "parameters": {"text": text, **parameters}}}


@contextlib.contextmanager
def stack(run_dir: Path, name: str, *flags: str):
    """A broker (no startup grace: an unknown intent type is refused at once), a pool of two example workers, and a
    gateway in front of them; all stopped at the end."""
    broker = cluster.Broker(f"{name}b", run_dir, {"startup-grace-ms": 100})
    pool = gateway = None
    try:
        broker.wait_ready()
        pool = cluster.start_pool(broker, run_dir, f"{name}pool", workers=2)
        cluster.wait_for_workers(broker, 2, procs=[pool])
        gateway = Gateway(name, run_dir, broker.frontend, *flags).wait_ready()
        gateway.frontend = broker.frontend
        yield gateway
    finally:
        for proc in (gateway, pool, broker):
            if proc is not None:
                proc.stop()
