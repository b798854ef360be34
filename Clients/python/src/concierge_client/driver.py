"""The socket loop: one thread owns the DEALER (and its monitor), runs the machine, and takes callers' commands
from a queue (woken through a pipe). Both front ends submit to it; only their sinks differ."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import zmq
from zmq.utils.monitor import recv_monitor_message

from . import errors, machine, wire
from .errors import ClientError

_MONITORED = (
    zmq.EVENT_DISCONNECTED
    | zmq.EVENT_HANDSHAKE_SUCCEEDED
    | zmq.EVENT_HANDSHAKE_FAILED_NO_DETAIL
    | zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL
    | zmq.EVENT_HANDSHAKE_FAILED_AUTH
)


@dataclass(frozen=True)
class CurveKeys:
    """CURVE keys (Z85 text, 40 characters each): the broker's public key and this client's key pair, whose public
    key must be on the broker's client allowlist (``concierge keygen`` makes them)."""

    server_public: str
    public: str
    secret: str

    @classmethod
    def from_files(cls, server_public_file: str, secret_file: str) -> CurveKeys:
        """The broker's ``.pub`` file and this client's ``.secret`` file as ``concierge keygen`` writes them (a ``#``
        comment line, then the Z85 key); the public key is derived from the secret one."""
        secret = read_key_file(secret_file)
        public = zmq.curve_public(secret.encode()).decode()
        return cls(read_key_file(server_public_file), public, secret)


def read_key_file(path: str) -> str:
    """The Z85 key of a key file, read as the broker reads it: the first word of each line, lines whose first word
    starts with ``#`` being comments."""
    with open(path, encoding="ascii") as file:
        for line in file:
            words = line.split()
            if words and not words[0].startswith("#"):
                if len(words[0]) != 40:
                    raise ValueError(f"{path}: a Z85 key has 40 characters")
                return words[0]
    raise ValueError(f"{path}: no key")


class _SocketConnection:
    """A DEALER with the client's routing id and CURVE keys, and its monitor; a move replaces both."""

    def __init__(self, context: zmq.Context[Any], routing_id: bytes, curve: CurveKeys | None, endpoint: str):
        self.context = context
        self.routing_id = routing_id
        self.curve = curve
        self.socket, self.monitor = self._make(endpoint)

    def _make(self, endpoint: str) -> tuple[zmq.Socket[Any], zmq.Socket[Any]]:
        socket: zmq.Socket[Any] = self.context.socket(zmq.DEALER)
        socket.setsockopt(zmq.LINGER, 0)
        socket.setsockopt(zmq.ROUTING_ID, self.routing_id)
        socket.setsockopt(zmq.SNDHWM, 0)
        socket.setsockopt(zmq.RCVHWM, 0)
        if self.curve is not None:
            socket.curve_serverkey = self.curve.server_public.encode()
            socket.curve_publickey = self.curve.public.encode()
            socket.curve_secretkey = self.curve.secret.encode()
        monitor = socket.get_monitor_socket(_MONITORED)
        try:
            socket.connect(endpoint)
        except zmq.ZMQError:
            socket.disable_monitor()
            monitor.close(0)
            socket.close(0)
            raise
        return socket, monitor

    def send(self, frames: list[bytes]) -> bool:
        try:
            self.socket.send_multipart(frames, zmq.NOBLOCK)
            return True
        except zmq.Again:
            return False

    def reconnect(self, endpoint: str) -> bool:
        try:
            made = self._make(endpoint)
        except zmq.ZMQError:
            return False
        self.close()
        self.socket, self.monitor = made
        return True

    def take_events(self) -> list[tuple[str, str]]:
        events: list[tuple[str, str]] = []
        while self.monitor.poll(0):
            message = recv_monitor_message(self.monitor)
            event = message["event"]
            if event == zmq.EVENT_DISCONNECTED:
                events.append((machine.DISCONNECTED, ""))
            elif event == zmq.EVENT_HANDSHAKE_SUCCEEDED:
                events.append((machine.HANDSHAKE_SUCCEEDED, ""))
            elif event == zmq.EVENT_HANDSHAKE_FAILED_NO_DETAIL:
                events.append((machine.HANDSHAKE_BROKE_OFF, "the connection broke off during the handshake"))
            elif event == zmq.EVENT_HANDSHAKE_FAILED_AUTH:
                events.append((machine.HANDSHAKE_FAILED, "the broker refused this client's CURVE key"))
            else:
                events.append((machine.HANDSHAKE_FAILED, "security mechanism mismatch (CURVE on one side only?)"))
        return events

    def close(self) -> None:
        try:
            self.socket.disable_monitor()
        except zmq.ZMQError:
            pass
        self.monitor.close(0)
        self.socket.close(0)


Command = Callable[[machine.Machine, machine.Connection, float], None]


class Driver:
    """Runs the machine on a thread of its own."""

    def __init__(
        self,
        config: machine.Config,
        routing_id: str,
        curve: CurveKeys | None,
    ) -> None:
        if not config.endpoints:
            raise ClientError(errors.TRANSPORT, "no broker endpoint")
        self.context: zmq.Context[Any] = zmq.Context()
        try:
            self.connection = _SocketConnection(self.context, routing_id.encode(), curve, config.endpoints[0])
        except zmq.ZMQError as e:
            self.context.term()
            raise ClientError(errors.TRANSPORT, f"{config.endpoints[0]}: {e}") from None
        self.machine = machine.Machine(config, time.monotonic())
        self._lock = threading.Lock()
        self._commands: list[Command] = []
        self._closed = False
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_r, False)
        os.set_blocking(self._wake_w, False)
        self._serial = 0
        self._ids = 0
        self._thread = threading.Thread(target=self._run, name="concierge-client", daemon=True)
        self._thread.start()

    def next_serial(self) -> int:
        with self._lock:
            self._serial += 1
            return self._serial

    def next_request_id(self) -> str:
        with self._lock:
            self._ids += 1
            return f"r{self._ids}"

    def submit(self, command: Command, on_closed: Callable[[ClientError], None]) -> None:
        with self._lock:
            if not self._closed:
                self._commands.append(command)
                self._wake()
                return
        on_closed(ClientError(errors.CLOSED, "the client is closed"))

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._wake()
        if threading.current_thread() is not self._thread:
            self._thread.join(10)

    def _wake(self) -> None:
        try:
            os.write(self._wake_w, b"x")
        except BlockingIOError:
            pass  # the pipe is full: a wake is pending already

    def _run(self) -> None:
        m, conn = self.machine, self.connection
        try:
            while True:
                poller = zmq.Poller()
                socket = conn.socket
                poller.register(socket, zmq.POLLIN)
                poller.register(conn.monitor, zmq.POLLIN)
                poller.register(self._wake_r, zmq.POLLIN)
                closed = False
                while conn.socket is socket:
                    now = time.monotonic()
                    # At most a minute: an idle machine has nothing to wake for, and callers wake it by the pipe.
                    timeout = max(0, int(min(m.wake_time - now, 60.0) * 1000) + 1)
                    poller.poll(timeout)
                    try:
                        os.read(self._wake_r, 4096)
                    except BlockingIOError:
                        pass
                    for event, detail in conn.take_events():
                        m.connection_event(event, detail, time.monotonic(), conn)
                    with self._lock:
                        commands, self._commands = self._commands, []
                        closed = self._closed
                    if commands:
                        m.before_commands(time.monotonic())
                    for command in commands:
                        command(m, conn, time.monotonic())
                    while conn.socket is socket:
                        try:
                            frames = socket.recv_multipart(zmq.NOBLOCK)
                        except zmq.Again:
                            break
                        m.received(wire.decode(frames), time.monotonic())
                    if closed:
                        break
                    m.tick(time.monotonic(), conn)
                if closed:
                    break
        finally:
            m.close()
            # Commands that come after the close end with `closed` (every command checks this first).
            m.handshake_failure = ClientError(errors.CLOSED, "the client is closed")
            with self._lock:
                self._closed = True
                leftover, self._commands = self._commands, []
            for command in leftover:
                command(m, _ClosedConnection(), time.monotonic())
            conn.close()
            self.context.term()
            os.close(self._wake_r)
            os.close(self._wake_w)


class _ClosedConnection:
    def send(self, frames: list[bytes]) -> bool:
        return False

    def reconnect(self, endpoint: str) -> bool:
        return False

    def take_events(self) -> list[tuple[str, str]]:
        return []
