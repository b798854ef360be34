"""The Python client's rules without sockets or clocks (concierge_client.machine, .ledger, .retry, .pushback,
.wire), as Tests/IntentClientTests test the Swift client's: a fake connection records what is sent, the time is
given, and sinks record what callers get."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "Clients" / "python" / "src"))

from concierge_client import errors, wire  # noqa: E402
from concierge_client.errors import ClientError  # noqa: E402
from concierge_client.ledger import READ, Ledger  # noqa: E402
from concierge_client.machine import (  # noqa: E402
    DISCONNECTED,
    HANDSHAKE_FAILED,
    HANDSHAKE_SUCCEEDED,
    Config,
    Machine,
)
from concierge_client.procedures import request_frames  # noqa: E402
from concierge_client.reply import ConversationState, Reply  # noqa: E402
from concierge_client.retry import RetryPolicy, is_retryable  # noqa: E402


class FakeConnection:
    def __init__(self) -> None:
        self.sent: list[list[bytes]] = []
        self.endpoints: list[str] = []

    def send(self, frames: list[bytes]) -> bool:
        self.sent.append(frames)
        return True

    def reconnect(self, endpoint: str) -> bool:
        self.endpoints.append(endpoint)
        return True

    def take_events(self) -> list[tuple[str, str]]:
        return []

    def commands(self, name: bytes) -> list[list[bytes]]:
        return [f for f in self.sent if f[1] == name]


class Recorder:
    def __init__(self) -> None:
        self.replies: list[Reply] = []
        self.ended: list[ClientError | None] = []

    def push(self, reply: Reply) -> None:
        self.replies.append(reply)

    def close(self, error: ClientError | None) -> None:
        self.ended.append(error)


def incoming(kind: str, rid: str, status: str, body: bytes = b"{}", phase: str = "handle") -> wire.Incoming:
    return wire.Incoming(kind, Reply(rid, status, phase, body))


def error_body(code: str, **extra: object) -> bytes:
    return wire.encode_body({"code": code, "message": code, **extra})


def connected(endpoints: list[str] | None = None, **kw: object) -> tuple[Machine, FakeConnection]:
    m = Machine(Config(endpoints or ["ipc://a"], **kw), now=0.0)  # type: ignore[arg-type]
    c = FakeConnection()
    m.connection_event(HANDSHAKE_SUCCEEDED, "", 0.0, c)
    return m, c


def send(m: Machine, c: FakeConnection, rid: str, now: float = 0.0, serial: int = 1) -> Recorder:
    sink = Recorder()
    frames = request_frames(rid, {"type": "Echo", "parameters": {}}, "handle", None, None, None)
    m.request(rid, serial, frames, "Echo", False, sink, now, c)
    return sink


def test_an_idle_client_has_nothing_to_wake_for_and_a_busy_one_wakes_for_its_heartbeat():
    """Idle long after the last message heard, no heartbeat is due (else the driver's poll would spin); a request
    makes one due an interval later, and the tick then sends PING."""
    m, c = connected(heartbeat=1.0)
    m.tick(30.0, c)
    assert m.wake_time > 90.0 and c.sent == []
    m.before_commands(30.0)  # as the driver does before a caller's commands
    send(m, c, "r", now=30.0)
    assert m.wake_time == 31.0
    m.tick(31.0, c)
    assert c.commands(b"PING")


def test_after_a_reconnect_the_sweep_asks_status_and_settles_each_request_once():
    m, c = connected()
    lost, known, ended = send(m, c, "lost"), send(m, c, "known", serial=2), send(m, c, "ended", serial=3)
    m.connection_event(DISCONNECTED, "", 1.0, c)
    m.connection_event(HANDSHAKE_SUCCEEDED, "", 1.5, c)
    assert sorted(f[2] for f in c.commands(b"STATUS")) == [b"ended", b"known", b"lost"]
    m.received(incoming("status", "lost", "error", error_body("unknown-request"), ""), 1.6)
    m.received(incoming("status", "known", "progress", b'{"state":"running"}'), 1.6)
    m.received(incoming("status", "ended", "final"), 1.6)
    assert lost.ended[0] is not None and lost.ended[0].code == errors.BROKER_RESTARTED
    assert known.ended == [] and known.replies == []  # progress of the sweep is not the caller's
    assert [r.status for r in ended.replies] == ["final"] and ended.ended == [None]
    # The REPLY that crossed the sweep's answer is ignored: exactly one ending per request.
    m.received(incoming("reply", "ended", "final"), 1.7)
    assert len(ended.replies) == 1
    m.received(incoming("reply", "known", "final"), 1.8)
    assert [r.status for r in known.replies] == ["final"] and known.ended == [None]


def test_without_a_broker_requests_fail_with_connection_lost_after_the_reconnect_timeout():
    m, c = connected(heartbeat=1.0, liveness=3, reconnect_timeout=10.0)
    sink = send(m, c, "r")
    m.connection_event(DISCONNECTED, "", 1.0, c)
    m.tick(10.9, c)
    assert sink.ended == []
    m.tick(11.0, c)
    assert sink.ended[0] is not None and sink.ended[0].code == errors.CONNECTION_LOST


def test_a_busy_client_pings_a_quiet_broker_and_moves_on_after_liveness_intervals():
    m, c = connected(["ipc://a", "ipc://b"], heartbeat=1.0, liveness=3)
    send(m, c, "r")
    m.tick(1.0, c)
    assert len(c.commands(b"PING")) == 1
    m.tick(3.1, c)
    assert c.endpoints == ["ipc://b"]


def test_no_handshake_within_a_heartbeat_moves_to_the_next_endpoint_and_resends_what_never_left():
    m = Machine(Config(["ipc://a", "ipc://b"], heartbeat=0.5), now=0.0)
    c = FakeConnection()
    send(m, c, "r")
    m.tick(0.5, c)
    assert c.endpoints == ["ipc://b"]
    assert [f[2] for f in c.commands(b"REQUEST")] == [b"r", b"r"]  # sent again on the new socket


def test_unavailable_moves_on_and_is_the_callers_ending():
    m, c = connected(["ipc://a", "ipc://b"])
    sink = send(m, c, "r")
    m.received(incoming("reply", "r", "error", error_body("unavailable"), ""), 0.1)
    m.tick(0.1, c)
    assert sink.replies[0].error_code == "unavailable" and c.endpoints == ["ipc://b"]


def test_a_busy_refusal_with_pushback_throttles_new_requests_of_its_type_unsent():
    m, c = connected()
    send(m, c, "first")
    m.received(incoming("reply", "first", "error", error_body("busy", pushback_rate=1, pushback_ms=1000), ""), 0.0)
    assert send(m, c, "second", 0.0, 2).ended == []  # the burst: one token, sent
    third = send(m, c, "third", 0.0, 3)
    assert third.ended[0] is not None and third.ended[0].code == errors.THROTTLED
    assert b"third" not in [f[2] for f in c.commands(b"REQUEST")]
    assert send(m, c, "later", 1.5, 4).ended == []  # the hint's time is up


def test_a_refused_curve_handshake_fails_everything_and_later_requests_at_once():
    m, c = connected()
    sink = send(m, c, "r")
    m.connection_event(HANDSHAKE_FAILED, "refused", 0.1, c)
    later = send(m, c, "s", 0.2, 2)
    assert sink.ended[0].code == later.ended[0].code == errors.HANDSHAKE_FAILED


def test_cancel_of_a_request_in_flight_is_answered_by_its_ending():
    m, c = connected()
    stream = send(m, c, "r")
    waiter = Recorder()
    m.cancel("r", waiter, 0.0, c)
    assert c.commands(b"CANCEL") == [[b"CIPC02", b"CANCEL", b"r"]]
    m.received(incoming("reply", "r", "error", error_body("cancelled")), 0.1)
    assert waiter.replies[0].error_code == stream.replies[0].error_code == "cancelled"


def test_retry_policy_backoff_is_the_swift_clients():
    p = RetryPolicy()
    assert [p.base_backoff(n) for n in range(1, 7)] == [0.1, 0.2, 0.4, 0.8, 1.6, 2.0]
    rng = random.Random(7)
    assert all(0.8 * p.base_backoff(n) <= p.backoff(n, rng) <= p.base_backoff(n) for n in range(1, 9))
    assert RetryPolicy(max_attempts=0, multiplier=0.5, jitter=3).max_attempts == 1
    assert {c for c in ("busy", "worker-lost", "timeout", "outcome-unknown", "unavailable", "broker-restarted",
                        "connection-lost", "throttled") if is_retryable(c)} == {
        "busy", "worker-lost", "timeout", "outcome-unknown", "unavailable", "broker-restarted", "connection-lost",
        "throttled"}
    assert not any(is_retryable(c) for c in ("idempotency-conflict", "cancelled", "bad-body", "handler-failed"))


def test_the_ledger_numbers_turns_and_reads_first_after_an_unknown_outcome():
    ledger = Ledger()
    assert ledger.begin("c", True, "SendMessage") == 1
    with pytest.raises(ClientError) as busy:
        ledger.begin("c", False)
    assert busy.value.code == errors.TURN_IN_FLIGHT
    ledger.ended("c", 1, Reply("t1", "final", "resolve", b'{"conversation":{"id":"c","turn":1,"state":"asking"}}'))
    assert ledger.begin("c", False) == 2
    ledger.ended("c", 2, None)  # connection lost: the outcome is unknown
    assert ledger.begin("c", False) == READ
    ledger.learned(ConversationState.from_json({"id": "c", "turn": 2, "state": "asking"}))
    assert ledger.begin("c", False) == 3


@pytest.mark.parametrize("traceparent,tracestate,ok", [
    ("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", "", True),
    ("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", "a=b", True),
    ("01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-future", "", True),
    ("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-x", "", False),
    ("ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", "", False),
    ("00-00000000000000000000000000000000-b7ad6b7169203331-01", "", False),
    ("00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01", "", False),
    ("00-0AF7651916CD43DD8448EB211C80319C-b7ad6b7169203331-01", "", False),
    ("", "a=b", False),
    ("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", "x" * 513, False),
    ("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", "a=\x01", False),
])
def test_trace_context_is_checked_as_cipc04_says(traceparent, tracestate, ok):
    if ok:
        wire.check_trace_context(traceparent.encode(), tracestate.encode())
    else:
        with pytest.raises(ClientError) as bad:
            wire.check_trace_context(traceparent.encode(), tracestate.encode())
        assert bad.value.code == errors.BAD_TRACE_CONTEXT
