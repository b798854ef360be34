"""What ``Client`` and ``AsyncClient`` share: configuration and the driver."""

from __future__ import annotations

import secrets
from collections.abc import Sequence

from . import machine
from .driver import CurveKeys, Driver
from .ledger import Ledger


class ClientBase:
    def __init__(
        self,
        endpoints: str | Sequence[str] = "tcp://127.0.0.1:5555",
        *,
        routing_id: str | None = None,
        curve: CurveKeys | None = None,
        heartbeat: float = 1.0,
        heartbeat_liveness: int = 3,
        reconnect_timeout: float = 10.0,
        heed_pushback: bool = True,
    ) -> None:
        self.endpoints = [endpoints] if isinstance(endpoints, str) else list(endpoints)
        self.routing_id = routing_id or f"client-{secrets.randbits(64)}"
        config = machine.Config(self.endpoints, heartbeat, heartbeat_liveness, reconnect_timeout, heed_pushback)
        self._driver = Driver(config, self.routing_id, curve)
        self._ledger = Ledger()

    def make_request_id(self) -> str:
        """A request id unique on this client."""
        return self._driver.next_request_id()

    @property
    def sweeps(self) -> int:
        """How many STATUS sweeps the client made after a reconnect (PROTOCOL.md 7.2)."""
        return self._driver.machine.sweeps
