"""The client's rules without sockets or clocks (a port of the Swift client's ``ClientStateMachine``): requests in
flight, the STATUS sweep after a reconnect (PROTOCOL.md 7.2), following the active broker across endpoints (7.3),
silence and the reconnect timeout, the broker's pushback (6.3), cancellation (4.10.2) and conversation queries
(4.11.1).

The driver hands it one event at a time with the time (``now``, monotonic seconds): a command, a decoded message,
a connection event, a turn of the loop. The machine sends through the connection it is given, and ends callers'
operations through their sinks. Both front ends (``Client`` and ``AsyncClient``) share it through the driver."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Protocol

from . import errors, wire
from .errors import ClientError
from .pushback import Hint, Pushback
from .reply import Reply


class Sink(Protocol):
    """Where a caller waits: ``push`` hands it a reply, ``close`` ends the wait (with an error, or None)."""

    def push(self, reply: Reply) -> None: ...

    def close(self, error: ClientError | None) -> None: ...


class Connection(Protocol):
    """The socket the machine sends through."""

    def send(self, frames: list[bytes]) -> bool: ...

    def reconnect(self, endpoint: str) -> bool: ...

    def take_events(self) -> list[tuple[str, str]]: ...


DISCONNECTED = "disconnected"
HANDSHAKE_SUCCEEDED = "handshake-succeeded"
HANDSHAKE_BROKE_OFF = "handshake-broke-off"
HANDSHAKE_FAILED = "handshake-failed"


@dataclass
class Config:
    endpoints: list[str]
    heartbeat: float = 1.0
    liveness: int = 3
    reconnect_timeout: float = 10.0
    heed_pushback: bool = True


@dataclass
class Pending:
    serial: int
    stream: Sink | None
    frames: list[bytes]
    sent_on: int
    may_have_arrived: bool
    throttle_key: str | None
    is_turn: bool
    cancel_waiters: list[Sink] = field(default_factory=list)
    cancel_sent: bool = False
    cancel_connection: int = 0


@dataclass
class StatusWaiter:
    kind: str  # "caller", "sweep" or "cancel"
    sink: Sink | None = None
    connection: int = 0
    serial: int = 0


@dataclass
class ConversationWaiter:
    sink: Sink
    end: bool
    connection: int


def _resolve(sink: Sink, reply: Reply) -> None:
    sink.push(reply)
    sink.close(None)


class Rotation:
    """The endpoint in use, and when to move to the next (EndpointRotation)."""

    def __init__(self, endpoints: list[str], window: float) -> None:
        self.endpoints = endpoints or [""]
        self.window = window
        self.index = 0
        self.waiting_since: float | None = None

    @property
    def current(self) -> str:
        return self.endpoints[self.index]

    @property
    def rotates(self) -> bool:
        return len(self.endpoints) > 1

    def await_handshake(self, now: float) -> None:
        if self.waiting_since is None:
            self.waiting_since = now

    def handshake_succeeded(self) -> None:
        self.waiting_since = None

    @property
    def move_deadline(self) -> float | None:
        if not self.rotates or self.waiting_since is None:
            return None
        return self.waiting_since + self.window

    def overdue(self, now: float) -> bool:
        deadline = self.move_deadline
        return deadline is not None and now >= deadline

    def advance(self) -> str:
        self.index = (self.index + 1) % len(self.endpoints)
        self.waiting_since = None
        return self.current


class Machine:
    """See the module's documentation."""

    def __init__(self, config: Config, now: float) -> None:
        self.config = config
        self.pending: dict[str, Pending] = {}
        self.status_waiters: dict[str, list[StatusWaiter]] = {}
        self.conversation_waiters: dict[str, list[ConversationWaiter]] = {}
        self.ping_waiters: list[Sink] = []
        self.pushbacks: dict[str, Pushback] = {}
        self.connection = 0
        self.reconnecting = False
        self.rotation = Rotation(config.endpoints, config.heartbeat)
        self.rotation.await_handshake(now)
        self.established = False
        self.handshake_succeeded_before = False
        self.lost_since: float | None = None
        self.move_requested = False
        self.handshake_failure: ClientError | None = None
        self.handshake_trouble: str | None = None
        self.last_heard = now
        self.last_ping = 0.0
        self.sweeps = 0  # how many sweeps ran (observable by tests)

    @property
    def busy(self) -> bool:
        return bool(self.pending or self.status_waiters or self.ping_waiters or self.conversation_waiters)

    @property
    def wake_time(self) -> float:
        """When the loop must tick if nothing happens before. The heartbeat counts only while something waits for
        the broker: an idle client sends no PING, so counted when idle it would pass once and keep the loop awake."""
        wake = max(self.last_heard, self.last_ping) + self.config.heartbeat if self.busy else math.inf
        deadline = self.rotation.move_deadline
        if deadline is not None:
            wake = min(wake, deadline)
        if self.lost_since is not None:
            wake = min(wake, self.lost_since + self.config.reconnect_timeout)
        return wake

    # -- events ----------------------------------------------------------------------------------------------

    def before_commands(self, now: float) -> None:
        """Commands arrived: an idle client starts timing the broker's silence from now."""
        if not self.busy:
            self.last_heard = now
            if self.lost_since is not None:
                self.lost_since = now

    def received(self, incoming: wire.Incoming | None, now: float) -> None:
        """A message from the broker (None: one a client cannot use; it still proves the broker alive)."""
        self.last_heard = now
        if incoming is None:
            self.lost_since = None
            return
        reply = incoming.reply
        if incoming.kind == "pong" or reply is None:
            for sink in self.ping_waiters:
                sink.close(None)
            self.ping_waiters.clear()
            self.lost_since = None
            return
        if incoming.kind == "conversation":
            self.lost_since = None
            waiters = self.conversation_waiters.get(reply.request_id)
            if waiters:
                first = waiters.pop(0)
                if not waiters:
                    del self.conversation_waiters[reply.request_id]
                _resolve(first.sink, reply)
            return
        code = reply.error_code
        if reply.request_id == "" and code in ("unsupported-version", "unknown-command"):
            # Only conversations (CIPC03) and traced messages (CIPC04) go out in a version an older broker may not
            # speak, and every other command has an F2 the answer would echo: this broker has no conversations, or
            # no trace context.
            self.lost_since = None
            self._fail_newer_versions(code)
            return
        if code == "unavailable":
            self.move_requested = True
        else:
            self.lost_since = None
        self._deliver(reply, incoming.kind == "status")

    def tick(self, now: float, connection: Connection) -> None:
        busy = self.busy
        interval = self.config.heartbeat
        liveness = max(1, self.config.liveness)
        if busy and now - self.last_heard > interval * liveness:
            if self.lost_since is None:
                self.lost_since = now
            self._move(now, connection)
            self.last_heard = now
        elif self.rotation.overdue(now):
            if busy and self.lost_since is None:
                self.lost_since = now
            self._move(now, connection)
        elif self.move_requested and self.rotation.rotates:
            if busy and self.lost_since is None:
                self.lost_since = now
            self._move(now, connection)
        self.move_requested = False
        if self.lost_since is not None and busy and now - self.lost_since >= self.config.reconnect_timeout:
            trouble = f"; the last handshake failed: {self.handshake_trouble}" if self.handshake_trouble else ""
            self._fail_all(
                ClientError(
                    errors.CONNECTION_LOST,
                    f"no broker answered within {self.config.reconnect_timeout} s "
                    f"({','.join(self.rotation.endpoints)}){trouble}",
                )
            )
            self.lost_since = None
        if busy and now - max(self.last_heard, self.last_ping) >= interval:
            connection.send(wire.ping())
            self.last_ping = now

    def close(self) -> None:
        self._fail_all(ClientError(errors.CLOSED, "the client is closed"))

    def connection_event(self, event: str, detail: str, now: float, connection: Connection) -> None:
        if event == DISCONNECTED:
            self.rotation.await_handshake(now)
            if self.lost_since is None:
                self.lost_since = now
            self.established = False
            self.reconnecting = True
            self.connection += 1
        elif event == HANDSHAKE_SUCCEEDED:
            self.handshake_failure = None
            self.handshake_trouble = None
            self.rotation.handshake_succeeded()
            self.established = True
            self.handshake_succeeded_before = True
            if self.reconnecting:
                self.reconnecting = False
                self._sweep(connection)
            for request in self.pending.values():
                request.may_have_arrived = True
        elif event == HANDSHAKE_BROKE_OFF:
            self.handshake_trouble = detail
        elif event == HANDSHAKE_FAILED:
            error = ClientError(errors.HANDSHAKE_FAILED, f"{self.rotation.current}: {detail}")
            self.handshake_failure = error
            self._fail_all(error)

    # -- commands --------------------------------------------------------------------------------------------

    def request(
        self,
        request_id: str,
        serial: int,
        frames: list[bytes],
        intent_type: str | None,
        is_turn: bool,
        stream: Sink,
        now: float,
        connection: Connection,
    ) -> None:
        """Sends a REQUEST or TURN (unless the pushback refuses it) and keeps it in flight."""
        if self.handshake_failure is not None:
            stream.close(self.handshake_failure)
            return
        if request_id in self.pending:
            stream.close(ClientError(errors.DUPLICATE_REQUEST, f"request {request_id} is already in flight"))
            return
        key = intent_type if self.config.heed_pushback else None
        if key is not None:
            pushback = self.pushbacks.get(key)
            if pushback is not None and not pushback.admit(now):
                stream.close(
                    ClientError(
                        errors.THROTTLED,
                        f"request {request_id}: not sent: the broker is overloaded with {key} requests and asked "
                        f"this client for at most {int(pushback.rate)} per second for a while (pushback)",
                    )
                )
                return
        if not connection.send(frames):
            stream.close(self._given_up(connection, now))
            return
        self.pending[request_id] = Pending(
            serial, stream, frames, self.connection, self.established, key, is_turn
        )

    def status(self, request_id: str, sink: Sink, now: float, connection: Connection) -> None:
        if self.handshake_failure is not None:
            sink.close(self.handshake_failure)
        elif connection.send(wire.status(request_id)):
            self.status_waiters.setdefault(request_id, []).append(StatusWaiter("caller", sink, self.connection))
        else:
            sink.close(self._given_up(connection, now))

    def ping(self, sink: Sink, now: float, connection: Connection) -> None:
        if self.handshake_failure is not None:
            sink.close(self.handshake_failure)
        elif connection.send(wire.ping()):
            self.ping_waiters.append(sink)
        else:
            sink.close(self._given_up(connection, now))

    def conversation_query(self, cid: str, end: bool, sink: Sink, now: float, connection: Connection) -> None:
        if self.handshake_failure is not None:
            sink.close(self.handshake_failure)
        elif connection.send(wire.conversation_query(cid, end)):
            self.conversation_waiters.setdefault(cid, []).append(ConversationWaiter(sink, end, self.connection))
        else:
            sink.close(self._given_up(connection, now))

    def abandon(self, request_id: str, serial: int, now: float, connection: Connection) -> None:
        """The caller stopped listening: stop the request at the broker, and drop its ending when it comes."""
        request = self.pending.get(request_id)
        if request is None or request.serial != serial:
            return
        request.stream = None
        if not request.cancel_sent:
            if not connection.send(wire.cancel(request_id)):
                self._finish(request_id, None, self._given_up(connection, now))
                return
            request.cancel_sent = True
            request.cancel_connection = self.connection

    def cancel(self, request_id: str, sink: Sink, now: float, connection: Connection) -> None:
        if self.handshake_failure is not None:
            sink.close(self.handshake_failure)
            return
        request = self.pending.get(request_id)
        if request is not None:
            if not request.cancel_sent:
                if not connection.send(wire.cancel(request_id)):
                    sink.close(self._given_up(connection, now))
                    return
                request.cancel_sent = True
                request.cancel_connection = self.connection
            request.cancel_waiters.append(sink)
        elif connection.send(wire.cancel(request_id)):
            self.status_waiters.setdefault(request_id, []).append(StatusWaiter("cancel", sink, self.connection))
        else:
            sink.close(self._given_up(connection, now))

    # -- replies ---------------------------------------------------------------------------------------------

    def _deliver(self, reply: Reply, is_status: bool) -> None:
        rid = reply.request_id
        if is_status:
            waiters = self.status_waiters.get(rid)
            if not waiters:
                return
            # The broker answers a CANCEL as STATUS only about a request it does not have in flight, so never
            # with progress: a progress answer is for the first STATUS query or sweep waiting.
            index = 0
            if reply.status == "progress":
                found = [i for i, w in enumerate(waiters) if w.kind != "cancel"]
                if not found:
                    return
                index = found[0]
            waiter = waiters.pop(index)
            if not waiters:
                del self.status_waiters[rid]
            if waiter.kind == "sweep":
                self._settle(rid, waiter.serial, reply)
            elif waiter.sink is not None:
                _resolve(waiter.sink, reply)
            return
        request = self.pending.get(rid)
        if request is None:
            if reply.is_final:
                self._answer_cancel(rid, reply)
            return
        if request.cancel_sent and reply.error_code == "unknown-command":
            for sink in request.cancel_waiters:
                sink.close(_cancel_unsupported(rid))
            request.cancel_waiters.clear()
            return
        if request.throttle_key is not None:
            key, request.throttle_key = request.throttle_key, None
            if reply.error_code == "busy" and self.config.heed_pushback:
                hint = Hint.from_error_body(reply.body)
                if hint is not None:
                    self.pushbacks.setdefault(key, Pushback()).heed(hint, self.last_heard)
        if reply.is_final:
            self._finish(rid, reply, None)
        elif request.stream is not None:
            request.stream.push(reply)

    def _finish(self, rid: str, reply: Reply | None, error: ClientError | None) -> None:
        request = self.pending.pop(rid, None)
        if request is None:
            return
        if request.stream is not None:
            if reply is not None:
                request.stream.push(reply)
            request.stream.close(error)
        for sink in request.cancel_waiters:
            if reply is not None:
                _resolve(sink, reply)
            else:
                sink.close(error)

    def _answer_cancel(self, rid: str, reply: Reply) -> bool:
        waiters = self.status_waiters.get(rid)
        if not waiters:
            return False
        for i, w in enumerate(waiters):
            if w.kind == "cancel" and w.sink is not None:
                waiters.pop(i)
                if not waiters:
                    del self.status_waiters[rid]
                if reply.error_code == "unknown-command":
                    w.sink.close(_cancel_unsupported(rid))
                else:
                    _resolve(w.sink, reply)
                return True
        return False

    # -- reconnecting ----------------------------------------------------------------------------------------

    def _sweep(self, connection: Connection) -> None:
        """After the connection came back: STATUS about every request in flight (the broker may be a new one that
        never heard of them); callers' STATUS, CANCEL and conversation queries of a lost connection are sent
        again."""
        self.sweeps += 1
        for rid, waiters in list(self.status_waiters.items()):
            kept: list[StatusWaiter] = []
            for w in waiters:
                if w.kind == "sweep":
                    continue
                if w.connection < self.connection:
                    connection.send(wire.status(rid) if w.kind == "caller" else wire.cancel(rid))
                kept.append(StatusWaiter(w.kind, w.sink, self.connection))
            if kept:
                self.status_waiters[rid] = kept
            else:
                del self.status_waiters[rid]
        for cid, cwaiters in self.conversation_waiters.items():
            for cw in cwaiters:
                if cw.connection < self.connection:
                    connection.send(wire.conversation_query(cid, cw.end))
                    cw.connection = self.connection
        if self.ping_waiters:
            connection.send(wire.ping())
        for rid, request in self.pending.items():
            if request.sent_on < self.connection and connection.send(wire.status(rid)):
                self.status_waiters.setdefault(rid, []).append(StatusWaiter("sweep", serial=request.serial))
        for rid, request in self.pending.items():
            if request.cancel_sent and request.cancel_connection < self.connection:
                if connection.send(wire.cancel(rid)):
                    request.cancel_connection = self.connection

    def _settle(self, rid: str, serial: int, reply: Reply) -> None:
        request = self.pending.get(rid)
        if request is None or request.serial != serial or not reply.is_final:
            return
        code = reply.error_code
        if code == "unavailable":
            return  # an unavailable broker cannot tell: the next broker's sweep will
        if code == "unknown-request":
            self._finish(
                rid,
                None,
                ClientError(
                    errors.BROKER_RESTARTED,
                    f"request {rid}: the broker restarted and no longer knows this request; whether it ran is unknown",
                ),
            )
        else:
            self._finish(rid, reply, None)

    def _move(self, now: float, connection: Connection) -> None:
        endpoint = self.rotation.advance()
        if not connection.reconnect(endpoint):
            self.rotation.await_handshake(now)
            return
        self.rotation.await_handshake(now)
        self.connection += 1
        self.reconnecting = True
        self.established = False
        for request in self.pending.values():
            if not request.may_have_arrived and connection.send(request.frames):
                request.sent_on = self.connection

    def _fail_all(self, error: ClientError) -> None:
        for rid in list(self.pending):
            self._finish(rid, None, error)
        for waiters in self.status_waiters.values():
            for w in waiters:
                if w.sink is not None:
                    w.sink.close(error)
        self.status_waiters.clear()
        for sink in self.ping_waiters:
            sink.close(error)
        self.ping_waiters.clear()
        for cwaiters in self.conversation_waiters.values():
            for cw in cwaiters:
                cw.sink.close(error)
        self.conversation_waiters.clear()

    def _fail_newer_versions(self, code: str) -> None:
        """Fails what the broker cannot read: turns and conversation queries (``conversations-unsupported``), and
        traced requests (the broker's ``unsupported-version``: send them without a traceparent)."""
        where = self.rotation.current
        for rid, request in list(self.pending.items()):
            if request.frames[0] == wire.SIGNATURES[4] and not request.is_turn:
                error = ClientError(code, f"request {rid}: the broker at {where} does not take trace context (CIPC04)")
            elif request.is_turn:
                error = ClientError(
                    errors.CONVERSATIONS_UNSUPPORTED,
                    f"the broker at {where} does not serve conversations (CIPC03; it answered {code})",
                )
            else:
                continue
            self._finish(rid, None, error)
        for cwaiters in self.conversation_waiters.values():
            for cw in cwaiters:
                cw.sink.close(
                    ClientError(errors.CONVERSATIONS_UNSUPPORTED, f"the broker at {where} does not serve conversations")
                )
        self.conversation_waiters.clear()

    def _given_up(self, connection: Connection, now: float) -> ClientError:
        for event, detail in connection.take_events():
            self.connection_event(event, detail, now, connection)
        return self.handshake_failure or ClientError(
            errors.HANDSHAKE_FAILED, f"{self.rotation.current}: libzmq closed the connection for good (failed handshake)"
        )


def _cancel_unsupported(rid: str) -> ClientError:
    return ClientError(
        errors.CANCEL_UNSUPPORTED, f"request {rid}: the broker does not support CANCEL (it answered unknown-command)"
    )
