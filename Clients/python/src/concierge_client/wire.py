"""CIP/Client frames (Schemas/PROTOCOL.md section 4): encoders for what a client sends and a decoder for what the
broker answers. No sockets. Versions are chosen per message, as the Swift client does: ``CIPC01`` for a plain
REQUEST, STATUS and PING; ``CIPC02`` for a REQUEST with an idempotency key and for CANCEL; ``CIPC03`` for TURN,
CONVERSATION and END; ``CIPC04`` for a REQUEST or TURN carrying W3C trace context."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from . import errors
from .errors import ClientError
from .reply import Reply

SIGNATURES = {1: b"CIPC01", 2: b"CIPC02", 3: b"CIPC03", 4: b"CIPC04"}
VERSIONS = {sig: v for v, sig in SIGNATURES.items()}
PHASES = ("lifecycle", "resolve", "confirm", "handle")
MAX_ID = 255

_TRACEPARENT = re.compile(rb"^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})")


@dataclass(frozen=True)
class TraceContext:
    """W3C trace context (Trace Context Level 1 section 3.2) as CIPC04 carries it: ``traceparent`` and an optional
    ``tracestate`` (1..512 bytes of printable ASCII)."""

    traceparent: str
    tracestate: str = ""

    def __post_init__(self) -> None:
        check_trace_context(self.traceparent.encode("ascii", "replace"), self.tracestate.encode("ascii", "replace"))

    @property
    def trace_id(self) -> str:
        return self.traceparent[3:35]

    @property
    def parent_id(self) -> str:
        return self.traceparent[36:52]

    @property
    def sampled(self) -> bool:
        return int(self.traceparent[53:55], 16) & 1 == 1


def check_trace_context(traceparent: bytes, tracestate: bytes) -> None:
    """Raises ClientError ``bad-trace-context`` unless the pair is valid as the brief of CIPC04 says."""

    def bad(why: str) -> ClientError:
        return ClientError(errors.BAD_TRACE_CONTEXT, why)

    if not traceparent:
        if tracestate:
            raise bad("a tracestate needs a traceparent")
        return
    m = _TRACEPARENT.match(traceparent)
    if m is None:
        raise bad(f"traceparent {traceparent[:64]!r} is not version-trace_id-parent_id-flags in lowercase hex")
    version, trace_id, parent_id = m.group(1), m.group(2), m.group(3)
    if version == b"ff":
        raise bad("traceparent version ff is invalid")
    if trace_id == b"0" * 32 or parent_id == b"0" * 16:
        raise bad("traceparent trace id and parent id are not all zero")
    if version == b"00":
        if len(traceparent) != 55:
            raise bad("a version-00 traceparent is 55 bytes")
    elif len(traceparent) != 55 and traceparent[55:56] != b"-":
        raise bad("a future-version traceparent continues with '-' after 55 bytes")
    if tracestate and (len(tracestate) > 512 or any(b < 0x20 or b > 0x7E for b in tracestate)):
        raise bad("tracestate is 1..512 bytes of printable ASCII")


def encode_body(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def deadline_frame(deadline: float | None) -> bytes:
    """A deadline in seconds as the decimal milliseconds of F5 (empty: the broker's default)."""
    return b"" if deadline is None else str(max(1, int(round(deadline * 1000)))).encode()


def request(
    request_id: str,
    intent_type: str,
    phase: str,
    deadline: float | None,
    body: bytes,
    key: str | None,
    trace: TraceContext | None,
) -> list[bytes]:
    """REQUEST (4.2): CIPC01 without a key, CIPC02 with one (F7), CIPC04 with trace context (F8, F9)."""
    frames = [b"", b"REQUEST", request_id.encode(), intent_type.encode(), phase.encode(), deadline_frame(deadline), body]
    if trace is not None:
        frames[0] = SIGNATURES[4]
        frames += [(key or "").encode(), trace.traceparent.encode(), trace.tracestate.encode()]
    elif key is not None:
        frames[0] = SIGNATURES[2]
        frames.append(key.encode())
    else:
        frames[0] = SIGNATURES[1]
    return frames


def turn(
    request_id: str,
    conversation_id: str,
    number: int,
    deadline: float | None,
    body: bytes,
    flags: str,
    trace: TraceContext | None,
) -> list[bytes]:
    """TURN (4.11.1): CIPC03, or CIPC04 with trace context."""
    frames = [
        SIGNATURES[3],
        b"TURN",
        request_id.encode(),
        conversation_id.encode(),
        str(number).encode(),
        deadline_frame(deadline),
        body,
        flags.encode(),
    ]
    if trace is not None:
        frames[0] = SIGNATURES[4]
        frames += [trace.traceparent.encode(), trace.tracestate.encode()]
    return frames


def status(request_id: str) -> list[bytes]:
    return [SIGNATURES[1], b"STATUS", request_id.encode()]


def ping() -> list[bytes]:
    return [SIGNATURES[1], b"PING"]


def cancel(request_id: str) -> list[bytes]:
    return [SIGNATURES[2], b"CANCEL", request_id.encode()]


def conversation_query(conversation_id: str, end: bool) -> list[bytes]:
    return [SIGNATURES[3], b"END" if end else b"CONVERSATION", conversation_id.encode()]


@dataclass(frozen=True)
class Incoming:
    """A decoded message from the broker: ``kind`` is ``reply``, ``status``, ``pong`` or ``conversation``."""

    kind: str
    reply: Reply | None


def decode(frames: list[bytes]) -> Incoming | None:
    """A broker message, or None when it is not one a client can use (it still proves the broker alive)."""
    if len(frames) < 2 or frames[0] not in VERSIONS:
        return None
    version = VERSIONS[frames[0]]
    command = frames[1]
    if command == b"PONG":
        return Incoming("pong", None) if len(frames) == 2 else None
    if command not in (b"REPLY", b"STATUS", b"CONVERSATION"):
        return None
    expected = 6 if version == 1 else 7
    if len(frames) != expected or frames[3] not in (b"final", b"progress", b"error"):
        return None
    if command == b"CONVERSATION" and version < 3:
        return None
    flags = frames[6] if version >= 2 else b""
    reply = Reply(
        request_id=frames[2].decode("utf-8", "replace"),
        status=frames[3].decode(),
        phase=frames[4].decode("utf-8", "replace"),
        body=frames[5],
        is_replay=flags == b"replay",
    )
    return Incoming(command.decode().lower(), reply)
