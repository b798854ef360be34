"""CIP from the specification alone: a client (CIP/Client, CIPC01 to CIPC03) and a worker (CIP/Worker, CIPW01 to
CIPW06) in Python, and the broker's side of CIP/Worker (PyBroker) to test real workers.

Written from Schemas/PROTOCOL.md and the JSON Schemas in Schemas/json/ -- not from the Swift sources. Every message
received is checked against the spec: frame counts, signatures, commands, statuses, phases, decimal frames, the error
codes each carrier may hold (section 10.2), and every JSON body against its schema (interaction, progress, error).
Final Interactions of the intent types in Schemas/intents/ are also checked against their definitions (parameter
types, one resolution per declared parameter, values written back, response codes). A violation raises
ProtocolViolation (an AssertionError, so pytest reports it as a failed test).
"""

from __future__ import annotations

import itertools
import json
import os
import queue
import threading
import time
import uuid
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any, Callable, Iterable

import zmq
from jsonschema import Draft202012Validator
from referencing import Registry, Resource

REPO = Path(__file__).resolve().parents[2]
SCHEMAS = REPO / "Schemas"
BASE = "https://concierge.example/schemas/"

CIPC = b"CIPC01"
CIPW = b"CIPW01"
CIPC2 = b"CIPC02"  # section 4.10: idempotency keys, replay flags, CANCEL
CIPC3 = b"CIPC03"  # section 4.11: conversations: TURN, CONVERSATION, END
CIPW2 = b"CIPW02"  # section 5.13: JOB with key (F7) and attempt (F8), CANCEL to the worker, RESULT cancelled
CIPW3 = b"CIPW03"  # section 5.15: JOB with the last phase (F9): a lifecycle's phases in one job, a RESULT per phase
CIPW4 = b"CIPW04"  # section 5.16: READY announces each intent type's definition after its name
CIPW5 = b"CIPW05"  # section 5.7: JOB F10/F11, the W3C trace context (traceparent, tracestate); READY as CIPW04
CIPW6 = b"CIPW06"  # section 5.17: JOB in 4 frames, its fields packed into one binary header; otherwise as CIPW05
CLIENT_SIGNATURES = {1: CIPC, 2: CIPC2, 3: CIPC3}
CLIENT_VERSIONS = {sig: v for v, sig in CLIENT_SIGNATURES.items()}
WORKER_SIGNATURES = {1: CIPW, 2: CIPW2, 3: CIPW3, 4: CIPW4, 5: CIPW5, 6: CIPW6}
WORKER_VERSIONS = {sig: v for v, sig in WORKER_SIGNATURES.items()}
JOB_PHASES = ("resolve", "confirm", "handle")
PHASE_CODES = {phase: code for code, phase in enumerate(JOB_PHASES)}  # 5.17: the phase bytes of a CIPW06 JOB header
REQUEST_PHASES = JOB_PHASES + ("lifecycle",)
STATUSES = ("final", "progress", "error")
WORKER_ERROR_CODES = ("malformed", "unsupported-version", "unknown-command", "definition-mismatch", "forbidden")  # 5.9, 5.16, 13.3

# Section 10.2, "Carried in": which error codes a REPLY or a STATUS answer may hold.
REPLY_CODES = {
    "malformed", "unsupported-version", "unknown-command", "bad-request-id", "bad-phase", "bad-deadline",
    "too-large", "duplicate-request", "unknown-intent", "busy", "timeout", "worker-lost", "worker-crashed",
    "handler-failed", "bad-body", "shutting-down", "internal", "idempotency-conflict", "cancelled", "outcome-unknown", "unavailable",
    "bad-trace-context", "forbidden",
}
VALIDATION_CODES = {"unknown-parameter", "invalid-type", "out-of-range", "invalid-enum", "missing-parameter"}  # 5.11 step 4
# Section 4.11 (version 03): the broker's answers to TURNs. Only too-many-asks ends a turn that ran (so STATUS may
# answer it); the others refuse a TURN, which is not stored (4.8).
CONVERSATION_CODES = {"unknown-conversation", "conversation-ended", "turn-mismatch", "not-asked", "bad-option",
                      "bad-answer", "too-many-asks"}
REPLY_CODES |= VALIDATION_CODES | CONVERSATION_CODES
# A STATUS answer carries a stored error REPLY (6.4), or its own unknown-request / malformed.
STATUS_CODES = {"malformed", "unknown-request", "unknown-intent", "busy", "timeout", "worker-lost", "worker-crashed",
                "handler-failed", "bad-body", "shutting-down", "internal", "cancelled", "outcome-unknown",
                "unavailable", "too-many-asks"} | VALIDATION_CODES
# The error codes of a CONVERSATION answer (4.11.1): a malformed question, or no such conversation for this client.
CONVERSATION_ANSWER_CODES = {"malformed", "unknown-conversation"}
# 4.10.1: a request ended before any worker ran it leaves no trace; cancelled (4.10.2) ends an accepted request.
ACCEPTED_ENDING_CODES = ("timeout", "worker-lost", "handler-failed", "cancelled")


class ProtocolViolation(AssertionError):
    """A message from the broker that does not follow CIP."""


def violation(condition: bool, what: str, frames: list[bytes] | None = None) -> None:
    if not condition:
        raise ProtocolViolation(what + (f"\n  frames: {frames!r}" if frames is not None else ""))


def phase_order(phase: str) -> int:
    """The position of a job phase in a lifecycle (6.1): resolve 0, confirm 1, handle 2."""
    return JOB_PHASES.index(phase)


def next_phase(phase: str) -> str | None:
    """The job phase after this one in a lifecycle (6.1), None after handle."""
    i = JOB_PHASES.index(phase) + 1
    return JOB_PHASES[i] if i < len(JOB_PHASES) else None


def is_decimal_frame(frame: bytes) -> bool:
    """Section 3.3: 1 to 9 ASCII digits and nothing else."""
    return 1 <= len(frame) <= 9 and all(0x30 <= b <= 0x39 for b in frame)


_LOWER_HEX = frozenset(b"0123456789abcdef")


def is_traceparent(value: bytes) -> bool:
    """Section 4.2 (REQUEST F8): a W3C traceparent. Version 00 is exactly 55 bytes, `00-<trace id: 32 lowercase
    hex>-<parent id: 16 lowercase hex>-<flags: 2 lowercase hex>`, trace id and parent id not all zeros; a version
    other than 00 and ff is accepted when its first 55 bytes have that form and it is 55 bytes long or byte 55 is
    `-`; at most 512 bytes."""
    if not 55 <= len(value) <= 512:
        return False
    head = value[:55]
    if (head[2], head[35], head[52]) != (0x2D, 0x2D, 0x2D):
        return False
    version, trace_id, parent_id, flags = head[0:2], head[3:35], head[36:52], head[53:55]
    if not all(set(part) <= _LOWER_HEX for part in (version, trace_id, parent_id, flags)):
        return False
    if trace_id == b"0" * 32 or parent_id == b"0" * 16 or version == b"ff":
        return False
    return len(value) == 55 or (version != b"00" and value[55] == 0x2D)


def is_trace_context(traceparent: bytes, tracestate: bytes) -> bool:
    """Section 4.2 (REQUEST F8/F9, JOB F10/F11 of 5.7, the trace context of a CIPW06 header, 5.17): no trace (both
    empty), or a traceparent and a tracestate that is empty or 1..512 bytes of printable ASCII 0x20-0x7E."""
    if traceparent == b"":
        return tracestate == b""
    return is_traceparent(traceparent) and len(tracestate) <= 512 and all(0x20 <= b <= 0x7E for b in tracestate)


def pack_job_header(job_id: bytes, intent_type: str | bytes, phase: str | int, last: str | int | None = None,
                    time_left: int = 3000, attempt: int = 1, key: bytes = b"",
                    trace: tuple[bytes, bytes] | None = None) -> bytes:
    """F2 of a CIPW06 JOB (5.17): job id (8 bytes), phase and last phase (a byte each: 0 resolve, 1 confirm,
    2 handle), time left in ms (u64) and attempt (u32), little-endian, the intent type and the key each after its
    length (a byte), and with a trace context (`trace`: traceparent, tracestate) their lengths (two bytes each) and
    bytes; without one the header ends after the key. Nothing is checked, so that a test can build unusable headers
    (a phase byte 3, attempt 0, a type that is not UTF-8, ...); a phase may be given as its byte."""
    def code(p: str | int) -> int:
        return p if isinstance(p, int) else PHASE_CODES[p]

    t = intent_type.encode("utf-8") if isinstance(intent_type, str) else intent_type
    out = (job_id + bytes([code(phase), code(last if last is not None else phase)])
           + time_left.to_bytes(8, "little") + attempt.to_bytes(4, "little")
           + bytes([len(t)]) + t + bytes([len(key)]) + key)
    if trace is not None:
        traceparent, tracestate = trace
        out += len(traceparent).to_bytes(2, "little") + traceparent + len(tracestate).to_bytes(2, "little") + tracestate
    return out


@dataclass
class JobHeader:
    """The fields of a CIPW06 JOB header (5.17), named as the CIPW05 frames they replace (5.7)."""

    job_id: bytes       # F2
    phase: str          # F4
    last_phase: str     # F9
    time_left: int      # F5
    attempt: int        # F8
    intent_type: str    # F3
    key: bytes          # F7
    traced: bool        # whether the header has a trace context part (a CIPW05 JOB of 12 frames)
    traceparent: bytes  # F10, empty for none
    tracestate: bytes   # F11


def unpack_job_header(header: bytes, frames: list[bytes] | None = None) -> JobHeader:
    """Read a CIPW06 JOB header (5.17), holding it to every rule: 25..1562 bytes; phase and last phase bytes 0..2,
    the last not before the phase (W4); an attempt of at least 1; an intent type of 1..255 bytes of well-formed UTF-8
    (W5); a key of 0..255 bytes; a trace context that follows section 4.2 (traceparent 0 or 55..512 bytes,
    tracestate 0..512, none without a traceparent); no length that runs past the end and no bytes left over (W3).
    A ProtocolViolation otherwise."""
    violation(25 <= len(header) <= 1562, f"a CIPW06 JOB header is 25..1562 bytes, not {len(header)} (5.17)", frames)
    pos = 0

    def take(n: int, what: str) -> bytes:
        nonlocal pos
        violation(pos + n <= len(header), f"the CIPW06 JOB header ends inside {what} (5.17: a length past the end)",
                  frames)
        chunk = header[pos:pos + n]
        pos += n
        return chunk

    job_id = take(8, "the job id")
    phase, last = take(1, "the phase")[0], take(1, "the last phase")[0]
    violation(phase <= 2, f"the phase byte of a CIPW06 JOB is 0..2, not {phase} (5.17, W4)", frames)
    violation(last <= 2, f"the last phase byte of a CIPW06 JOB is 0..2, not {last} (5.17, W4)", frames)
    violation(last >= phase, "the last phase of a CIPW06 JOB does not come before its phase (5.17, 5.15, W4)", frames)
    time_left = int.from_bytes(take(8, "the time left"), "little")
    attempt = int.from_bytes(take(4, "the attempt"), "little")
    violation(attempt >= 1, "the attempt of a CIPW06 JOB is at least 1 (5.17, 5.13)", frames)
    n = take(1, "the intent type's length")[0]
    violation(n >= 1, "the intent type of a CIPW06 JOB is 1..255 bytes (5.17, W5)", frames)
    raw_type = take(n, "the intent type")
    try:
        intent_type = raw_type.decode("utf-8", errors="strict")
    except UnicodeDecodeError:
        intent_type = None
    violation(intent_type is not None, f"the intent type of a CIPW06 JOB is well-formed UTF-8 (5.17, W5): "
              f"{raw_type!r}", frames)
    k = take(1, "the key's length")[0]
    key = take(k, "the idempotency key")
    traced = pos < len(header)
    traceparent = tracestate = b""
    if traced:
        p = int.from_bytes(take(2, "the traceparent's length"), "little")
        traceparent = take(p, "the traceparent")
        s = int.from_bytes(take(2, "the tracestate's length"), "little")
        tracestate = take(s, "the tracestate")
        violation(p == 0 or 55 <= p <= 512, f"a traceparent is 0 or 55..512 bytes, not {p} (5.17, 4.2)", frames)
        violation(s <= 512, f"a tracestate is 0..512 bytes, not {s} (5.17, 4.2)", frames)
        violation(is_trace_context(traceparent, tracestate), "the trace context of a CIPW06 JOB follows section 4.2 "
                  f"(5.17): {traceparent!r} {tracestate!r}", frames)
    violation(pos == len(header), f"{len(header) - pos} bytes left over after the CIPW06 JOB header's fields (5.17)",
              frames)
    return JobHeader(job_id, JOB_PHASES[phase], JOB_PHASES[last], time_left, attempt, intent_type, key, traced,
                     traceparent, tracestate)


# ---------------------------------------------------------------------------------------------------------------
# JSON bodies (section 11)


def strict_loads(raw: bytes) -> Any:
    """Parse a body as section 11.1 wants it: UTF-8 without BOM, an object, no duplicate keys, no NaN/Infinity,
    nesting at most 64. Non-integers are parsed as Decimal so that JSON Schema's "integer" does not accept 5.0."""
    violation(len(raw) > 0, "a body frame is never empty (section 3.3)")
    violation(not raw.startswith(b"\xef\xbb\xbf"), "body starts with a byte order mark (section 11.1)")
    try:
        text = raw.decode("utf-8", errors="strict")
    except UnicodeDecodeError as e:
        raise ProtocolViolation(f"body is not UTF-8: {e}") from None

    def pairs(items):
        keys = [k for k, _ in items]
        violation(len(keys) == len(set(keys)), f"duplicate keys in a body object: {keys} (section 11.1)")
        return dict(items)

    def no_constant(name):
        raise ProtocolViolation(f"{name} in a body (section 11.1)")

    try:
        value = json.loads(text, object_pairs_hook=pairs, parse_float=Decimal, parse_constant=no_constant)
    except json.JSONDecodeError as e:
        raise ProtocolViolation(f"body is not JSON: {e}: {raw[:200]!r}") from None
    violation(isinstance(value, dict), f"the top-level value of a body is an object (section 11.1): {raw[:200]!r}")
    violation(_depth(value) <= 64, "body nests more than 64 levels (section 11.1)")
    return value


def _depth(v: Any) -> int:
    if isinstance(v, dict):
        return 1 + max((_depth(x) for x in v.values()), default=0)
    if isinstance(v, list):
        return 1 + max((_depth(x) for x in v), default=0)
    return 0


def encode(body: Any) -> bytes:
    """A body as bytes: dicts are encoded compactly as UTF-8 JSON; bytes and str are sent as they are."""
    if isinstance(body, bytes):
        return body
    if isinstance(body, str):
        return body.encode("utf-8")
    return json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def interaction(intent_type: str, identifier: str | None = None, **parameters: Any) -> dict:
    """A REQUEST body {"intent": {"type", "parameters"}} (section 11.2)."""
    intent: dict[str, Any] = {"type": intent_type, "parameters": parameters}
    if identifier is not None:
        intent["identifier"] = identifier
    return {"intent": intent}


class Schemas:
    """The schemas of Schemas/json in one referencing.Registry (Schemas/README.md), and the intent definitions."""

    def __init__(self, root: Path = SCHEMAS):
        self.documents: dict[str, dict] = {}
        for path in sorted((root / "json").glob("*.schema.json")):
            doc = json.loads(path.read_text("utf-8"))
            Draft202012Validator.check_schema(doc)
            self.documents[path.name] = doc
        self.registry = Registry().with_resources(
            (doc["$id"], Resource.from_contents(doc)) for doc in self.documents.values()
        )
        self._validators: dict[str, Draft202012Validator] = {}
        self.definitions: dict[str, dict] = {}
        for path in sorted((root / "intents").glob("*.json")):
            definition = json.loads(path.read_text("utf-8"))
            self.validator("intent-definition.schema.json").validate(definition)
            assert path.stem == definition["intent"], f"{path.name} defines {definition['intent']}"
            self.definitions[definition["intent"]] = definition

    def validator(self, ref: str) -> Draft202012Validator:
        """A validator for a schema file name or a sub-schema, e.g. 'interaction.schema.json#/$defs/person'."""
        if ref not in self._validators:
            self._validators[ref] = Draft202012Validator(
                {"$ref": BASE + ref}, registry=self.registry, format_checker=Draft202012Validator.FORMAT_CHECKER
            )
        return self._validators[ref]

    def check(self, ref: str, value: Any, what: str) -> None:
        errors = sorted(self.validator(ref).iter_errors(value), key=lambda e: list(e.absolute_path))
        if errors:
            details = "; ".join(f"{'/'.join(map(str, e.absolute_path)) or '(root)'}: {e.message}" for e in errors[:5])
            raise ProtocolViolation(f"{what} does not match {ref}: {details}\n  body: {_short(value)}")

    # -- checks against an intent definition (section 11.11), beyond what the generic schema can say ----------

    def parameter_schema(self, definition: dict, parameter: dict) -> dict:
        if parameter["type"] == "enum":
            scalar: dict = {"enum": definition["enums"][parameter["enum"]]}
        else:
            scalar = {"$ref": BASE + "interaction.schema.json#/$defs/" + parameter["type"]}
        return {"type": "array", "items": scalar} if parameter["list"] else scalar

    def check_value(self, definition: dict, parameter: dict, value: Any, what: str) -> None:
        schema = self.parameter_schema(definition, parameter)
        v = Draft202012Validator(schema, registry=self.registry, format_checker=Draft202012Validator.FORMAT_CHECKER)
        errors = list(v.iter_errors(value))
        violation(not errors, f"{what}: {value!r} is not a {parameter['type']}"
                  f"{' list' if parameter['list'] else ''} ({errors[0].message if errors else ''})")

    def check_interaction(self, body: dict, what: str, produced_by_worker: bool = True) -> None:
        """The generic schema, then, for a known intent type, its definition."""
        self.check("interaction.schema.json", body, what)
        definition = self.definitions.get(body["intent"]["type"])
        if definition is None:
            return
        declared = {p["name"]: p for p in definition["parameters"]}
        parameters = body["intent"].get("parameters", {})
        for name, value in parameters.items():
            violation(name in declared, f"{what}: intent parameter {name!r} is not declared by {definition['intent']}")
            if produced_by_worker:
                violation(value is not None, f"{what}: workers leave out parameters without a value (11.3): {name}")
            if value is not None:
                self.check_value(definition, declared[name], value, f"{what}: intent parameter {name!r}")
        if "resolve" in body and produced_by_worker:
            resolve = body["resolve"]
            violation(set(resolve) == set(declared), f"{what}: resolve must hold one resolution for every declared "
                      f"parameter (5.11): has {sorted(resolve)}, declared {sorted(declared)}")
            for name, resolution in resolve.items():
                p = declared[name]
                kind = resolution["kind"]
                if kind in ("success", "confirmationRequired"):
                    self.check_value(definition, p, resolution["value"], f"{what}: resolve.{name}.value")
                    violation(parameters.get(name) == resolution["value"],
                              f"{what}: the {kind} value of {name} is not written back into the intent (5.11)")
                elif kind == "disambiguation":
                    for option in resolution["options"]:
                        self.check_value(definition, p, option, f"{what}: resolve.{name}.options[]")
                elif kind == "unsupported" and "reason" in resolution:
                    violation(resolution["reason"] in p.get("unsupportedReasons", []),
                              f"{what}: reason {resolution['reason']!r} of {name} is not one of the parameter's "
                              f"unsupportedReasons {p.get('unsupportedReasons', [])}")
        if "confirm" in body:
            violation(body["confirm"]["code"] in definition["confirmCodes"],
                      f"{what}: confirm code {body['confirm']['code']!r} not in {definition['confirmCodes']}")
        if "handle" in body:
            handle = body["handle"]
            violation(handle["code"] in definition["handleCodes"],
                      f"{what}: handle code {handle['code']!r} not in {definition['handleCodes']}")
            activity = handle["userActivity"]
            if activity["activityType"] == definition["intent"] and "interaction" in activity["userInfo"]:
                self.check("interaction.schema.json#/$defs/defaultUserActivity", activity,
                           f"{what}: default user activity")
                response = activity["userInfo"]["interaction"]["response"]
                violation(response["code"] == handle["code"], f"{what}: default activity code differs (11.7)")
                violation(response.get("data") == handle.get("data"), f"{what}: default activity data differs (11.7)")



def echo_body(text: str = "x", intent_type: str = "PyEcho") -> bytes:
    """A REQUEST body: the Interaction of `intent_type` with one parameter, `text`."""
    return encode(interaction(intent_type, text=text))


def with_phase(raw: bytes, phase: str, value: Any) -> bytes:
    """`raw` (an Interaction) with member `phase` (`resolve`, `confirm`, `handle`) set to `value`."""
    obj = json.loads(raw)
    obj[phase] = value
    return encode(obj)


def new_key() -> bytes:
    """A fresh idempotency key."""
    return uuid.uuid4().hex.encode()


def registered_worker(spawn, broker, version: int = 2, types=("PyEcho",), capacity: int = 1, **kw):
    """A PyWorker of `version` that has registered: its first HEARTBEAT after READY has arrived (section 5.10)."""
    w = spawn.pyworker(broker, version=version, types=types, capacity=capacity, **kw)
    w.wait_heartbeat()
    return w

def _short(value: Any, limit: int = 600) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


SCHEMA_SET = Schemas()

# ---------------------------------------------------------------------------------------------------------------
# CIP/Client (section 4)


@dataclass
class Message:
    """A checked message from the broker's frontend: REPLY, STATUS (answer) or PONG."""

    frames: list[bytes]
    command: str
    request_id: bytes = b""
    status: str = ""
    phase: str = ""
    body: bytes = b""
    json: Any = None
    flags: bytes = b""  # F6 of a version-02 REPLY or STATUS answer (4.10): b"" or b"replay"
    received_at: float = field(default_factory=time.monotonic)

    @property
    def version(self) -> int:
        return CLIENT_VERSIONS.get(self.frames[0], 1)

    @property
    def code(self) -> str | None:
        return self.json.get("code") if self.status == "error" else None

    @property
    def conversation(self) -> dict | None:
        """The Conversation object of a turn's REPLY (its body's "conversation", 4.11.3) or of a CONVERSATION
        answer (its whole final body, 4.11.1); None when there is none."""
        if self.command == "CONVERSATION":
            return self.json if self.status == "final" else None
        return self.json.get("conversation") if isinstance(self.json, dict) else None

    def __repr__(self) -> str:
        return (f"<{self.command}{f' v{self.version}' if self.version >= 2 else ''} {self.request_id!r} {self.status} "
                f"{self.phase!r} {self.body[:300].decode('utf-8', 'replace')}{' ' + self.flags.decode() if self.flags else ''}>")


_ids = itertools.count(1)


def new_id(prefix: str = "py") -> bytes:
    return f"{prefix}-{next(_ids)}-{uuid.uuid4().hex[:8]}".encode()


class Client:
    """A CIP/Client DEALER (section 3.2). Many requests may be in flight; messages are matched by request id.

    The client keeps count of what it is owed -- one final/error REPLY per REQUEST (at most one progress before it),
    one STATUS per STATUS, one PONG per PING -- and treats anything else as a protocol violation, which is stricter
    than a production client (section 4.9 tells it to ignore unmatched messages) but is what a test wants.
    """

    def __init__(self, endpoint: str, routing_id: bytes | None = None, context: zmq.Context | None = None,
                 schemas: Schemas = SCHEMA_SET, version: int = 1):
        self.context = context or zmq.Context.instance()
        # 1: CIPC01; 2: CIPC02 (section 4.10): REQUESTs carry a key, CANCEL is available; 3: CIPC03 (4.11): as 2,
        # and conversations (TURN, CONVERSATION, END)
        self.version = version
        self.signature = CLIENT_SIGNATURES[version]
        self.socket = self.context.socket(zmq.DEALER)
        self.socket.setsockopt(zmq.LINGER, 0)
        if routing_id is not None:
            self.socket.setsockopt(zmq.ROUTING_ID, routing_id)
        self.socket.connect(endpoint)
        self.endpoint = endpoint
        self.schemas = schemas
        self.inbox: list[Message] = []
        self.owed_replies: dict[bytes, int] = {}      # request id -> REQUESTs not yet ended
        self.progress_seen: dict[bytes, int] = {}     # request id -> progress REPLYs for the current request(s)
        self.owed_status: dict[bytes, int] = {}
        self.owed_conversation: dict[bytes, int] = {}  # conversation id -> CONVERSATION answers owed (4.11.1)
        self.owed_pongs = 0
        self.owed_anonymous = 0                       # answers expected with an empty F2 (section 4.8)
        self.tolerated_status: dict[bytes, int] = {}  # CANCELs that may or may not get a STATUS answer (a race)
        # 5.15: a broker run with `--chain-lifecycle handle` treats a lifecycle job chained through handle as a handle
        # dispatch from the start, and its `worker-lost` names the phase it last heard of (any job phase). Off: a
        # worker-lost is for handle jobs only (6.7), as for every broker that chains no further than confirm.
        self.chain_through_handle = False
        self.closed = False

    # -- sending ------------------------------------------------------------------------------------------

    def send_raw(self, frames: Iterable[bytes], expect: str | None = None, rid: bytes = b"") -> None:
        """Send any frames. expect: 'REPLY', 'STATUS' or 'CONVERSATION' if the broker owes an answer with F2 = rid
        (b"" for an answer with an empty F2), 'PONG' for a PONG, None if nothing is owed."""
        frames = list(frames)
        if expect == "PONG":
            self.owed_pongs += 1
        elif expect == "CONVERSATION":
            if rid:
                self.owed_conversation[rid] = self.owed_conversation.get(rid, 0) + 1
            else:
                self.owed_anonymous += 1
        elif expect == "REPLY":
            if rid:
                self.owed_replies[rid] = self.owed_replies.get(rid, 0) + 1
            else:
                self.owed_anonymous += 1
        elif expect == "STATUS":
            if rid:
                self.owed_status[rid] = self.owed_status.get(rid, 0) + 1
            else:
                self.owed_anonymous += 1
        self.socket.send_multipart(frames)

    def request(self, intent_type: str | bytes, phase: str | bytes, body: Any, deadline: str | int | bytes = b"",
                rid: bytes | None = None, key: bytes | str | None = None) -> bytes:
        """Send a REQUEST (section 4.2; for a version-02 client with the idempotency key as F7, section 4.10,
        empty for none); returns its request id."""
        rid = rid if rid is not None else new_id()
        frames = [self.signature, b"REQUEST", rid, _b(intent_type), _b(phase), _b(deadline), encode(body)]
        if self.version >= 2:
            frames.append(_b(key) if key is not None else b"")
        else:
            assert key is None, "a CIPC01 REQUEST has no idempotency key (4.10)"
        self.send_raw(frames, expect="REPLY", rid=rid)
        return rid

    def status(self, rid: bytes) -> None:
        self.send_raw([self.signature, b"STATUS", rid], expect="STATUS", rid=rid)

    # -- conversations (version 03, section 4.11) ----------------------------------------------------------

    def turn(self, conversation: bytes | str, turn: int | str | bytes, body: Any, deadline: str | int | bytes = b"",
             flags: str | bytes = b"", rid: bytes | None = None) -> bytes:
        """Send TURN (4.11.1): [CIPC03, TURN, request id, conversation id, turn, deadline, body, flags]; returns
        its request id. Its answers are REPLYs, as a REQUEST's."""
        assert self.version >= 3, "TURN is version 03 (4.11)"
        rid = rid if rid is not None else new_id("turn")
        self.send_raw([CIPC3, b"TURN", rid, _b(conversation), _b(turn), _b(deadline), encode(body), _b(flags)],
                      expect="REPLY", rid=rid)
        return rid

    def read_conversation(self, conversation: bytes | str, timeout: float = 15.0) -> Message:
        """CONVERSATION (4.11.1) and its answer."""
        assert self.version >= 3, "CONVERSATION is version 03 (4.11)"
        cid = _b(conversation)
        self.send_raw([CIPC3, b"CONVERSATION", cid], expect="CONVERSATION", rid=cid)
        return self.conversation_answer(cid, timeout)

    def end_conversation(self, conversation: bytes | str, timeout: float = 15.0) -> Message:
        """END (4.11.1) and its answer."""
        assert self.version >= 3, "END is version 03 (4.11)"
        cid = _b(conversation)
        self.send_raw([CIPC3, b"END", cid], expect="CONVERSATION", rid=cid)
        return self.conversation_answer(cid, timeout)

    def conversation_answer(self, cid: bytes, timeout: float = 15.0) -> Message:
        return self.next(lambda m: m.command == "CONVERSATION" and m.request_id == cid, timeout,
                         f"CONVERSATION answer for {cid!r}")

    def ping(self) -> None:
        self.send_raw([self.signature, b"PING"], expect="PONG")

    def cancel(self, rid: bytes, answer: str = "auto") -> None:
        """Send CIPC02 CANCEL (4.10.2). It has no answer of its own while the request is in flight (its ending REPLY
        is the answer); for a request id the broker does not find in flight, a STATUS answer (the stored ending or
        unknown-request). answer: "none" (in flight: no STATUS answer owed), "status" (one is owed), "maybe" (the
        request may have ended just now: a STATUS answer is accepted but not owed), "auto": "none" when this client
        still waits for the request's ending, else "status"."""
        assert self.version >= 2, "CANCEL is version 02 (4.10)"
        if answer == "auto":
            answer = "none" if self.owed_replies.get(rid, 0) > 0 else "status"
        if answer == "status":
            self.send_raw([self.signature, b"CANCEL", rid], expect="STATUS", rid=rid)
            return
        if answer == "maybe":
            self.tolerated_status[rid] = self.tolerated_status.get(rid, 0) + 1
        self.send_raw([self.signature, b"CANCEL", rid])

    def ending(self, rid: bytes, timeout: float = 15.0) -> Message:
        """The final or error REPLY of rid, skipping a progress REPLY (safe to call with a short timeout: nothing
        is lost when it times out)."""
        m = self.next(lambda m: m.command == "REPLY" and m.request_id == rid and m.status != "progress", timeout,
                      f"ending REPLY for {rid!r}")
        self.inbox = [x for x in self.inbox if not (x.command == "REPLY" and x.request_id == rid)]
        return m

    # -- receiving ----------------------------------------------------------------------------------------

    def _receive_one(self, timeout: float) -> Message | None:
        if not self.socket.poll(max(0, int(timeout * 1000))):
            return None
        frames = self.socket.recv_multipart()
        message = self.check(frames)
        self._account(message)
        return message

    def next(self, predicate: Callable[[Message], bool] = lambda m: True, timeout: float = 15.0,
             what: str = "a message") -> Message:
        """The first message (in arrival order) that matches predicate; others stay in the inbox."""
        for i, m in enumerate(self.inbox):
            if predicate(m):
                return self.inbox.pop(i)
        end = time.monotonic() + timeout
        while True:
            left = end - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"no {what} within {timeout} s (inbox: {self.inbox})")
            m = self._receive_one(left)
            if m is None:
                continue
            if predicate(m):
                return m
            self.inbox.append(m)

    def reply(self, rid: bytes, timeout: float = 15.0) -> Message:
        """The next REPLY (progress, final or error) for rid."""
        return self.next(lambda m: m.command == "REPLY" and m.request_id == rid, timeout, f"REPLY for {rid!r}")

    def replies(self, rid: bytes, timeout: float = 15.0) -> list[Message]:
        """Every REPLY of one request up to its final or error REPLY: [progress?, final|error]."""
        out = [self.reply(rid, timeout)]
        if out[0].status == "progress":
            out.append(self.reply(rid, timeout))
        violation(out[-1].status in ("final", "error"),
                  f"the REPLY after a progress REPLY must be final or error (4.1): {out}")
        return out

    def status_answer(self, rid: bytes, timeout: float = 15.0) -> Message:
        return self.next(lambda m: m.command == "STATUS" and m.request_id == rid, timeout, f"STATUS for {rid!r}")

    def pong(self, timeout: float = 15.0) -> Message:
        return self.next(lambda m: m.command == "PONG", timeout, "PONG")

    def call(self, intent_type: str, phase: str, body: Any, deadline: str | int | bytes = b"",
             rid: bytes | None = None, timeout: float = 15.0) -> list[Message]:
        """REQUEST, then every REPLY up to the final or error one."""
        rid = self.request(intent_type, phase, body, deadline, rid)
        return self.replies(rid, timeout)

    def run(self, intent_type: str, phase: str, body: Any, deadline: str | int | bytes = b"",
            timeout: float = 15.0) -> Message:
        """REQUEST and its final or error REPLY, asserting that no progress REPLY came."""
        replies = self.call(intent_type, phase, body, deadline, timeout=timeout)
        violation(len(replies) == 1, f"unexpected progress REPLY: {replies}")
        return replies[0]

    def expect_silence(self, duration: float) -> None:
        """Nothing at all arrives for duration seconds (and nothing unread is waiting)."""
        violation(not self.inbox, f"unread messages: {self.inbox}")
        m = self._receive_one(duration)
        violation(m is None, f"unexpected message: {m}")

    def ping_roundtrip(self, timeout: float = 10.0) -> None:
        self.ping()
        self.pong(timeout)

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self.socket.close(0)

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- checking (sections 4.5 - 4.7, 10, 11) -------------------------------------------------------------

    def check(self, frames: list[bytes]) -> Message:
        violation(len(frames) >= 2, "a CIP message has at least 2 frames", frames)
        # A broker answers each message in the version it came in (4.10, 4.11), so a client may get any version up
        # to its own; a CIPC01 client never sends version 02 or 03 and never gets them.
        allowed = tuple(CLIENT_SIGNATURES[v] for v in range(1, self.version + 1))
        violation(frames[0] in allowed, f"F0 of a message from the frontend is one of {allowed} (9, 4.10)", frames)
        command = frames[1].decode("ascii", "replace")
        commands = ("REPLY", "STATUS", "PONG") + (("CONVERSATION",) if frames[0] == CIPC3 else ())
        violation(command in commands, f"the broker sends clients REPLY, STATUS or PONG only (4.1), and "
                  f"CONVERSATION in version 03 (4.11), not {command!r}", frames)
        if command == "PONG":
            violation(len(frames) == 2, "PONG has exactly 2 frames (4.7)", frames)
            return Message(frames, command)
        if command == "CONVERSATION":
            return self._check_conversation_answer(frames)
        flags = b""
        if frames[0] in (CIPC2, CIPC3):
            violation(len(frames) == 7, f"a version-02/03 {command} has exactly 7 frames (4.10, 4.11)", frames)
            flags = frames[6]
            violation(flags in (b"", b"replay"), f"F6 flags are empty or replay (4.10): {flags!r}", frames)
            violation(flags == b"" or frames[3] in (b"final", b"error"), "only a stored ending is a replay", frames)
        else:
            violation(len(frames) == 6, f"{command} has exactly 6 frames (4.5, 4.6)", frames)
        rid, status_b, phase_b, body = frames[2], frames[3], frames[4], frames[5]
        violation(len(rid) <= 255, "F2 (request id) is at most 255 bytes", frames)
        status = status_b.decode("ascii", "replace")
        phase = phase_b.decode("ascii", "replace")
        violation(status in STATUSES, f"F3 is final, progress or error, not {status!r}", frames)
        parsed = strict_loads(body)
        what = f"{command} {status} {rid!r}"
        if status == "final":
            violation(phase in JOB_PHASES, f"F4 of a final {command} names the phase that produced it, never "
                      f"lifecycle or empty (4.5): {phase!r}", frames)
            self.schemas.check_interaction(parsed, what)
            if "conversation" in parsed:
                violation(frames[0] == CIPC3, "only a version-03 turn's REPLY carries a conversation (4.11.3)", frames)
                self._check_conversation(parsed["conversation"], what, with_intent=False)
        elif status == "progress":
            violation(phase in JOB_PHASES, f"F4 of a progress {command} is a job phase (4.5): {phase!r}", frames)
            self.schemas.check("progress.schema.json", parsed, what)
            violation(parsed["phase"] == phase, f"progress body phase {parsed['phase']!r} differs from F4 (11.9)",
                      frames)
        else:
            violation(phase in REQUEST_PHASES + ("",), f"F4 of an error {command}: {phase!r}", frames)
            self.schemas.check("error.schema.json", parsed, what)
            code = parsed["code"]
            carriers = REPLY_CODES if command == "REPLY" else STATUS_CODES
            violation(code in carriers, f"error code {code!r} is not carried in {command} (10.2)", frames)
            if code in ("unsupported-version", "bad-request-id"):
                violation(rid == b"", f"{code} answers have an empty F2 (4.8)", frames)
            if code in ("unsupported-version", "bad-phase", "unknown-request", "unknown-command"):
                violation(phase == "", f"{code} answers have an empty F4 (4.8, 4.6)", frames)
            if code in ACCEPTED_ENDING_CODES:
                violation(phase in JOB_PHASES, f"{code} ends an accepted request: F4 is a job phase (4.5)", frames)
            if code == "worker-lost" and not self.chain_through_handle:
                violation(phase == "handle", "worker-lost is for handle jobs only (6.7)", frames)
            if code in CONVERSATION_CODES:
                violation(frames[0] == CIPC3, f"{code} answers a version-03 TURN (4.11)", frames)
            if code == "unknown-conversation":
                violation("conversation" not in parsed, "unknown-conversation tells nothing of a conversation "
                          "(4.11.5)", frames)
            if code in ("conversation-ended", "turn-mismatch", "too-many-asks", "not-asked", "bad-option"):
                violation("conversation" in parsed, f"{code} carries the conversation (4.8, 4.11.3)", frames)
            if code in ("malformed", "bad-request-id", "bad-deadline", "too-large", "duplicate-request"):
                violation("conversation" not in parsed, f"a refusal at checks 4 to 12 carries no conversation (4.8)",
                          frames)
            if code == "too-many-asks":
                violation(phase == "resolve" and "intent" in parsed and "parameter" in parsed,
                          "too-many-asks: F4 resolve, the body names intent and parameter (4.11.5)", frames)
                violation(parsed["conversation"].get("ending") == "too-many-asks" and
                          parsed["conversation"].get("endingParameter") == parsed["parameter"],
                          "too-many-asks ends the conversation, naming the parameter (4.11.5)", frames)
            if "conversation" in parsed:
                self._check_conversation(parsed["conversation"], what, with_intent=False)
            if code == "idempotency-conflict" and command == "REPLY":
                # (cancelled may reach a CIPC01 answer: a CIPC01 request cancelled by a CANCEL of its connection)
                violation(frames[0] in (CIPC2, CIPC3), "idempotency-conflict answers a version-02 or 03 REQUEST "
                          "(4.10.1)", frames)
        return Message(frames, command, rid, status, phase, body, json.loads(body), flags)

    def _check_conversation(self, conversation: Any, what: str, with_intent: bool) -> None:
        """A Conversation object (4.11.4): its schema; "intent" in CONVERSATION answers only."""
        self.schemas.check("conversation.schema.json", conversation, f"{what}: conversation")
        violation(("intent" in conversation) == with_intent,
                  f"{what}: a Conversation has \"intent\" in CONVERSATION answers only (4.11.4)")

    def _check_conversation_answer(self, frames: list[bytes]) -> Message:
        """A CONVERSATION answer (4.11.1): 7 frames laid out as a version-02 REPLY, F4 and F6 empty."""
        violation(len(frames) == 7, "a CONVERSATION answer has exactly 7 frames (4.11.1)", frames)
        cid, status_b, phase_b, body, flags = frames[2], frames[3], frames[4], frames[5], frames[6]
        status = status_b.decode("ascii", "replace")
        violation(status in ("final", "error"), f"F3 of a CONVERSATION answer is final or error: {status!r}", frames)
        violation(phase_b == b"" and flags == b"", "F4 and F6 of a CONVERSATION answer are empty (4.11.1)", frames)
        parsed = strict_loads(body)
        what = f"CONVERSATION {status} {cid!r}"
        if status == "final":
            self._check_conversation(parsed, what, with_intent=True)
            violation(parsed["id"].encode() == cid, f"{what}: the answer is about another conversation", frames)
        else:
            self.schemas.check("error.schema.json", parsed, what)
            violation(parsed["code"] in CONVERSATION_ANSWER_CODES, f"{what}: code {parsed['code']!r} (4.11.1)",
                      frames)
            violation("conversation" not in parsed, f"{what}: an error answer carries no conversation", frames)
        return Message(frames, "CONVERSATION", cid, status, "", body, json.loads(body), flags)

    def _account(self, m: Message) -> None:
        """Check that the broker owed us this message (4.1)."""
        if m.command == "PONG":
            violation(self.owed_pongs > 0, "a PONG nobody asked for", m.frames)
            self.owed_pongs -= 1
            return
        if m.command == "CONVERSATION":
            if m.request_id == b"" and self.owed_anonymous > 0:
                self.owed_anonymous -= 1
                return
            count = self.owed_conversation.get(m.request_id, 0)
            violation(count > 0, f"a CONVERSATION answer the client is not owed (4.1): {m}", m.frames)
            self.owed_conversation[m.request_id] = count - 1
            return
        owed = self.owed_replies if m.command == "REPLY" else self.owed_status
        if m.request_id == b"" and self.owed_anonymous > 0:
            self.owed_anonymous -= 1
            return
        count = owed.get(m.request_id, 0)
        if m.command == "STATUS" and count == 0 and self.tolerated_status.get(m.request_id, 0) > 0:
            self.tolerated_status[m.request_id] -= 1  # a CANCEL that crossed the request's ending (4.10.2)
            return
        violation(count > 0, f"a {m.command} the client is not owed (4.1: exactly one final or error REPLY per "
                  f"REQUEST, one STATUS per STATUS): {m}", m.frames)
        if m.command == "REPLY" and m.status == "progress":
            seen = self.progress_seen.get(m.request_id, 0)
            violation(seen < count, f"more than one progress REPLY for {m.request_id!r} (6.3)", m.frames)
            self.progress_seen[m.request_id] = seen + 1
            return
        owed[m.request_id] = count - 1
        if m.command == "REPLY":
            self.progress_seen[m.request_id] = max(0, self.progress_seen.get(m.request_id, 0) - 1)


def _b(value: str | int | bytes) -> bytes:
    if isinstance(value, bytes):
        return value
    return str(value).encode("utf-8")


# ---------------------------------------------------------------------------------------------------------------
# CIP/Worker (section 5)


@dataclass
class WorkerMessage:
    frames: list[bytes]
    command: str
    job_id: bytes = b""
    intent_type: str = ""
    phase: str = ""
    time_left: int = 0
    body: bytes = b""
    code: str = ""
    text: str = ""
    key: bytes = b""   # JOB F7 (version 02, 5.13): the request's idempotency key, empty for none
    attempt: int = 0   # JOB F8 (version 02): the attempt with this key, 1 without a key; 0 for a CIPW01 JOB
    last_phase: str = ""  # JOB F9 (version 03, 5.15): the last phase the worker runs; = phase for CIPW01/02 JOBs
    traceparent: bytes = b""  # JOB F10 (version 05, 5.7; packed in version 06, 5.17): empty for none
    tracestate: bytes = b""   # JOB F11
    traced: bool = False  # the JOB had a trace context part: 12 frames (CIPW05), a header past the key (CIPW06)
    received_at: float = field(default_factory=time.monotonic)

    @property
    def version(self) -> int:
        return WORKER_VERSIONS.get(self.frames[0], 1)

    @property
    def json(self) -> Any:
        return json.loads(self.body)

    def __repr__(self) -> str:
        extra = f" key={self.key!r} attempt={self.attempt}" if self.version >= 2 and self.command == "JOB" else ""
        if self.version >= 3 and self.command == "JOB":
            extra += f" last={self.last_phase}"
        if self.traced:
            extra += f" trace={self.traceparent!r},{self.tracestate!r}"
        return (f"<{self.command}{f' v{self.version}' if self.version >= 2 else ''} {self.job_id!r} {self.intent_type}"
                f" {self.phase} {self.code} {self.body[:200]!r}{extra}>")


class PyWorker:
    """A CIP/Worker DEALER with routing id = name (section 5.10).

    An I/O thread owns the socket: it checks and queues every message from the broker, counts the broker's
    HEARTBEATs, sends what the test queues, and sends HEARTBEAT once per interval (section 7.1) unless `silent` is
    set (to play a hung worker)."""

    def __init__(self, endpoint: str, name: bytes | None = None, types: Iterable[str] = ("PyEcho",),
                 capacity: int = 1, heartbeat_ms: int = 1000, context: zmq.Context | None = None, ready: bool = True,
                 version: int = 1):
        self.context = context or zmq.Context.instance()
        # 1: CIPW01; 2: CIPW02 (5.13): READY with CIPW02, and the broker then speaks CIPW02 to this worker: 9-frame
        # JOBs with key and attempt, CANCEL, every message with F0 CIPW02. 3: CIPW03 (5.15): as 2, with 10-frame JOBs
        # whose F9 is the last phase of the job (a chained lifecycle job is answered with a RESULT per phase; the test
        # plays the worker and sends them). 4 and 5: as 3, READY announces definitions (5.16: pass each type followed
        # by its definition's JSON in `types`), and a CIPW05 JOB may carry a trace context (5.7, F10/F11). 6: as 5,
        # with 4-frame JOBs whose fields are packed into one header (5.17), read into the same WorkerMessage fields.
        self.version = version
        self.signature = WORKER_SIGNATURES[version]
        self.registered_version: int | None = None  # the version of the last READY sent through ready()
        self.cancels_received: set[bytes] = set()  # job ids the broker sent CANCEL for
        self.name = name or f"py-worker-{uuid.uuid4().hex[:8]}".encode()
        self.types = [t.encode() if isinstance(t, str) else t for t in types]
        self.capacity = capacity
        self.interval = heartbeat_ms / 1000.0
        self.endpoint = endpoint
        self.heartbeats_received = 0
        self.silent = False
        self.heartbeating = False  # from READY until DISCONNECT (7.1)
        self.errors: list[BaseException] = []
        self.inbox: list[WorkerMessage] = []
        self._received: "queue.Queue[WorkerMessage]" = queue.Queue()
        self._outbox: "queue.Queue[list[bytes] | None]" = queue.Queue()
        self._stop = threading.Event()
        self._heartbeat = threading.Condition()
        self._thread: threading.Thread | None = None
        self.open()
        if ready:
            self.ready()

    def open(self) -> None:
        """A new socket (and I/O thread) with the worker's name as routing id."""
        self.close()
        self._stop = threading.Event()
        self._outbox = queue.Queue()
        socket = self.context.socket(zmq.DEALER)
        socket.setsockopt(zmq.LINGER, 200)
        socket.setsockopt(zmq.ROUTING_ID, self.name)
        socket.connect(self.endpoint)
        self._thread = threading.Thread(target=self._io, args=(socket, self._stop, self._outbox), daemon=True,
                                        name=f"pyworker-{self.name.decode(errors='replace')}")
        self._thread.start()

    def _io(self, socket: zmq.Socket, stop: threading.Event, outbox: "queue.Queue") -> None:
        last_sent = 0.0
        try:
            while not stop.is_set():
                while True:
                    try:
                        frames = outbox.get_nowait()
                    except queue.Empty:
                        break
                    socket.send_multipart(frames)
                    last_sent = time.monotonic()
                if self.heartbeating and not self.silent and time.monotonic() - last_sent >= self.interval:
                    socket.send_multipart([self.signature, b"HEARTBEAT"])
                    last_sent = time.monotonic()
                if socket.poll(5):
                    frames = socket.recv_multipart()
                    if self.silent:
                        continue  # a hung worker reads nothing
                    try:
                        m = self.check(frames)
                    except ProtocolViolation as e:
                        self.errors.append(e)
                        with self._heartbeat:
                            self._heartbeat.notify_all()
                        continue
                    if m.command == "CANCEL":
                        self.cancels_received.add(m.job_id)
                    if m.command == "HEARTBEAT":
                        self.heartbeats_received += 1
                        with self._heartbeat:
                            self._heartbeat.notify_all()
                    else:
                        self._received.put(m)
        finally:
            while True:  # what the test sent last (a DISCONNECT) still goes out
                try:
                    frames = outbox.get_nowait()
                except queue.Empty:
                    break
                socket.send_multipart(frames, zmq.NOBLOCK)
            socket.close(200)

    def send(self, frames: list[bytes]) -> None:
        self._outbox.put(list(frames))

    def ready(self, capacity: int | None = None, types: Iterable[bytes] | None = None) -> None:
        cap = str(capacity if capacity is not None else self.capacity).encode()
        self.registered_version = self.version
        self.send([self.signature, b"READY", cap, self.name, *(types if types is not None else self.types)])
        self.heartbeating = True

    def result(self, job: WorkerMessage | bytes, outcome: str, body: Any) -> None:
        job_id = job.job_id if isinstance(job, WorkerMessage) else job
        self.send([self.signature, b"RESULT", job_id, outcome.encode(), encode(body)])

    def cancelled(self, job: WorkerMessage | bytes, message: str = "the handler stopped: the job was cancelled") -> None:
        """RESULT cancelled (5.13): the handler stopped before doing anything it cannot undo. Only for a job the
        broker sent CANCEL for."""
        job_id = job.job_id if isinstance(job, WorkerMessage) else job
        assert self.version >= 2, "RESULT cancelled is version 02 (5.13)"
        assert job_id in self.cancels_received, "a worker MUST NOT answer cancelled to a job that was not cancelled"
        self.result(job_id, "cancelled", {"code": "cancelled", "message": message})

    def cancel_of(self, job: WorkerMessage | bytes, timeout: float = 15.0) -> WorkerMessage:
        """Wait for the broker's CANCEL of this job (5.13)."""
        job_id = job.job_id if isinstance(job, WorkerMessage) else job
        return self.next(lambda m: m.command == "CANCEL" and m.job_id == job_id, timeout, f"CANCEL {job_id!r}")

    def heartbeat(self) -> None:
        self.send([self.signature, b"HEARTBEAT"])

    def drain(self) -> None:
        self.send([self.signature, b"DRAIN"])

    def disconnect(self) -> None:
        self.heartbeating = False
        self.send([self.signature, b"DISCONNECT"])

    def next(self, predicate: Callable[[WorkerMessage], bool] = lambda m: True, timeout: float = 15.0,
             what: str = "a message") -> WorkerMessage:
        self._raise_errors()
        for i, m in enumerate(self.inbox):
            if predicate(m):
                return self.inbox.pop(i)
        end = time.monotonic() + timeout
        while True:
            left = end - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"worker {self.name!r}: no {what} within {timeout} s (inbox: {self.inbox})")
            try:
                m = self._received.get(timeout=min(left, 0.1))
            except queue.Empty:
                self._raise_errors()
                continue
            if predicate(m):
                return m
            self.inbox.append(m)

    def wait_heartbeat(self, timeout: float = 10.0) -> None:
        """Wait for the broker's next HEARTBEAT. There is no answer to READY (5.10); the broker sends HEARTBEAT to
        registered workers only, so after READY the first one says that the registration went through."""
        with self._heartbeat:
            start = self.heartbeats_received
            if not self._heartbeat.wait_for(lambda: self.heartbeats_received > start or self.errors, timeout):
                raise TimeoutError(f"worker {self.name!r}: no HEARTBEAT from the broker within {timeout} s")
        self._raise_errors()  # a message that broke the protocol (e.g. a HEARTBEAT in the wrong version)

    def job(self, timeout: float = 15.0) -> WorkerMessage:
        return self.next(lambda m: m.command == "JOB", timeout, "JOB")

    def pump(self, duration: float) -> None:
        """Wait duration seconds, moving whatever arrived into the inbox."""
        end = time.monotonic() + duration
        while (left := end - time.monotonic()) > 0:
            try:
                self.inbox.append(self._received.get(timeout=left))
            except queue.Empty:
                pass
        self._raise_errors()

    def expect_nothing(self, duration: float,
                       commands: Iterable[str] = ("JOB", "ERROR", "DISCONNECT", "DRAIN", "CANCEL")) -> None:
        """No message of these commands arrives within duration seconds."""
        self.pump(duration)
        got = [m for m in self.inbox if m.command in commands]
        violation(not got, f"unexpected messages to worker {self.name!r}: {got}")

    def _raise_errors(self) -> None:
        if self.errors:
            raise self.errors[0]

    def check(self, frames: list[bytes]) -> WorkerMessage:
        violation(len(frames) >= 2, "a CIP message has at least 2 frames", frames)
        violation(frames[0] in WORKER_VERSIONS, "F0 of a message from the backend is CIPW01 to CIPW06 (9, 5.7, 5.13, "
                  "5.15, 5.16, 5.17)", frames)
        command = frames[1].decode("ascii", "replace")
        # 5.1, 5.9: once registered, every message the broker sends a worker is in the version of its READY, ERROR
        # included; but the ERROR to a READY (sent raw in another version) or to a STATS query is in that message's
        # version, so ERROR is not held to it here (test_spec_points.py checks the registered case).
        if self.registered_version is not None and command != "ERROR":
            want = WORKER_SIGNATURES[self.registered_version]
            violation(frames[0] == want, f"a worker registered with {want!r} gets every message in that version "
                      f"(5.13)", frames)
        if command in ("HEARTBEAT", "DISCONNECT", "DRAIN"):
            violation(len(frames) == 2, f"{command} has exactly 2 frames (5.5, 5.8)", frames)
            return WorkerMessage(frames, command)
        if command == "ERROR":
            violation(len(frames) == 4, "ERROR has exactly 4 frames (5.9)", frames)
            code = frames[2].decode("ascii")
            violation(code in WORKER_ERROR_CODES, f"ERROR code {code!r} (5.9)", frames)
            return WorkerMessage(frames, command, code=code, text=frames[3].decode("utf-8"))
        if command == "CANCEL":
            violation(frames[0] != CIPW, "CANCEL exists only from CIPW02 on: a CIPW01 worker never gets it "
                      "(5.13, 5.15)", frames)
            violation(len(frames) == 3, "CANCEL has exactly 3 frames (5.13)", frames)
            violation(len(frames[2]) == 8, "CANCEL F2 is an 8-byte job id (5.13)", frames)
            return WorkerMessage(frames, command, frames[2])
        violation(command == "JOB", f"the broker sends workers JOB, CANCEL, HEARTBEAT, DISCONNECT, DRAIN or ERROR, "
                  f"not {command!r} (5, 5.13)", frames)
        if frames[0] == CIPW6:
            return self._check_packed_job(frames)
        key, attempt = b"", 0
        traceparent, tracestate = b"", b""
        last = frames[4] if len(frames) > 4 else b""
        if frames[0] in (CIPW2, CIPW3, CIPW4, CIPW5):
            if frames[0] == CIPW5:
                violation(len(frames) in (10, 12), "a CIPW05 JOB has 10 frames, or 12 with a trace context (5.7)",
                          frames)
                if len(frames) == 12:
                    traceparent, tracestate = frames[10], frames[11]
                    violation(is_trace_context(traceparent, tracestate), "JOB F10/F11 are a trace context as REQUEST "
                              "F8/F9, or both empty (4.2, 5.7)", frames)
            if frames[0] in (CIPW3, CIPW4, CIPW5):
                violation(len(frames) == 10 or (len(frames) == 12 and frames[0] == CIPW5),
                          "a CIPW03 (and CIPW04) JOB has exactly 10 frames (5.15, 5.16)", frames)
                last = frames[9]
                violation(last.decode("ascii", "replace") in JOB_PHASES, "JOB F9 (last phase) is resolve, confirm or "
                          "handle (5.15)", frames)
                violation(frames[4].decode("ascii", "replace") not in JOB_PHASES
                          or phase_order(last.decode()) >= phase_order(frames[4].decode()),
                          "JOB F9 (last phase) does not come before F4 (5.15)", frames)
            else:
                violation(len(frames) == 9, "a CIPW02 JOB has exactly 9 frames (5.13)", frames)
            key, attempt_b = frames[7], frames[8]
            violation(len(key) <= 255, "JOB F7 (key) is 0..255 bytes (5.13)", frames)
            violation(is_decimal_frame(attempt_b) and int(attempt_b) >= 1, "JOB F8 (attempt) is a decimal from 1 "
                      "(5.13)", frames)
            attempt = int(attempt_b)
            violation(key != b"" or attempt == 1, "the attempt is 1 without a key (5.13)", frames)
            # 5.13: the key is empty for resolve and confirm; 5.15: F7 and F8 are those of the job's handle phase, if
            # it has one (a job runs F4 to F9, so it has one when F9 is handle).
            violation(key == b"" or last == b"handle", "the key is always empty for a job without a handle phase "
                      "(5.13, 5.15)", frames)
        else:
            violation(len(frames) == 7, "JOB has exactly 7 frames (5.7)", frames)
        job_id, intent_type, phase, left, body = frames[2:7]
        violation(len(job_id) == 8, "a job id is exactly 8 bytes (3.3)", frames)
        violation(1 <= len(intent_type) <= 255, "JOB F3 is an intent type", frames)
        violation(phase.decode() in JOB_PHASES, "JOB F4 is resolve, confirm or handle (5.7)", frames)
        violation(is_decimal_frame(left), "JOB F5 is a decimal (3.3, 5.7)", frames)
        violation(len(body) > 0, "a body frame is never empty", frames)
        return WorkerMessage(frames, "JOB", job_id, intent_type.decode(), phase.decode(), int(left), body, key=key,
                             attempt=attempt, last_phase=last.decode(), traceparent=traceparent, tracestate=tracestate,
                             traced=len(frames) == 12)

    def _check_packed_job(self, frames: list[bytes]) -> WorkerMessage:
        """A CIPW06 JOB (5.17): exactly 4 frames, the header (every field checked by unpack_job_header) and a body
        that is not empty; the key and attempt as in 5.13 and 5.15."""
        violation(len(frames) == 4, "a CIPW06 JOB has exactly 4 frames: F0, JOB, the header, the body (5.17)", frames)
        h = unpack_job_header(frames[2], frames)
        body = frames[3]
        violation(len(body) > 0, "a body frame is never empty (5.17: F3 not empty)", frames)
        violation(h.key != b"" or h.attempt == 1, "the attempt is 1 without a key (5.13)", frames)
        violation(h.key == b"" or h.last_phase == "handle", "the key is always empty for a job without a handle phase "
                  "(5.13, 5.15)", frames)
        return WorkerMessage(frames, "JOB", h.job_id, h.intent_type, h.phase, h.time_left, body, key=h.key,
                             attempt=h.attempt, last_phase=h.last_phase, traceparent=h.traceparent,
                             tracestate=h.tracestate, traced=h.traced)

    def close(self) -> None:
        """Stop the I/O thread and close the socket (200 ms linger so that a last DISCONNECT goes out)."""
        if self._thread is not None:
            self._stop.set()
            self._thread.join(5)
            self._thread = None

    def __enter__(self) -> "PyWorker":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


# ---------------------------------------------------------------------------------------------------------------
# The broker's side of CIP/Worker (section 5), to test a real worker process from Python


@dataclass
class FromWorker:
    """A checked message from a worker: READY, RESULT, HEARTBEAT, DRAIN or DISCONNECT."""

    routing_id: bytes
    frames: list[bytes]
    command: str
    received_at: float = field(default_factory=time.monotonic)
    phase: str = ""    # RESULT: the phase it answers, for a job this PyBroker sent with job() (5.15: one per phase)
    last: bool = True  # RESULT: whether it is its job's last RESULT (False: a continue before the job's last phase)
    # A message in a version above the PyBroker's max_version: answered ERROR unsupported-version (check 2 of 5.12),
    # nothing else done with it (a READY does not register).
    refused: bool = False

    @property
    def job_id(self) -> bytes:
        return self.frames[2]

    @property
    def outcome(self) -> str:
        return self.frames[3].decode()

    @property
    def body(self) -> bytes:
        return self.frames[4]

    @property
    def json(self) -> Any:
        return json.loads(self.frames[4])

    def __repr__(self) -> str:
        more = f" {self.phase}{'' if self.last else ' (not last)'}" if self.command == "RESULT" and self.phase else ""
        more += " (refused)" if self.refused else ""
        signature = self.frames[0].decode("ascii", "replace")
        return f"<{self.command} {signature} from {self.routing_id!r} {self.frames[2:5]!r}{more}>"


@dataclass
class SentJob:
    """A JOB PyBroker sent and whose last RESULT has not arrived yet."""

    rid: bytes
    intent_type: str
    phase: str  # the phase the job's next RESULT answers: F4, then the next phase after each continue before `last`
    last: str   # F9 of a CIPW03 JOB (5.15); = F4 for a job of one phase


class PyBroker:
    """A ROUTER bound to a backend endpoint that plays the broker for real workers: it checks every message a worker
    sends (READY: capacity, name = routing id, intent types; RESULT: 5 frames, the job id of a JOB it sent,
    outcome, body against the interaction or error schema and, for a final Interaction, the intent definition and
    the outcome rule of 5.11), and sends HEARTBEAT to every worker that sent READY once per interval (unless
    `silent`). An I/O thread owns the socket.

    Versions (5.13): a worker whose READY is CIPW02 is spoken to in CIPW02 (HEARTBEAT, DRAIN, 9-frame JOBs with key
    and attempt, CANCEL); it may answer in either signature, and may answer a job it was sent CANCEL for with
    outcome `cancelled` (never another one). A worker whose READY is CIPW03 (5.15) is spoken to in CIPW03 (10-frame
    JOBs with the last phase F9) and may answer in any signature up to CIPW03. A job sent with job(..., last=...)
    later than its phase is chained: each RESULT answers the job's current phase (checked by the outcome rule of
    5.11 for that phase), a `continue` before the last phase moves the job on to the next phase, and any other RESULT
    is the job's last. A RESULT for a job after its last RESULT breaks the protocol (5.11: exactly one RESULT per
    JOB; 5.15: one per phase, up to the last). A CIPW04 to CIPW06 READY announces a definition after each type
    (5.16). A CIPW05 worker gets 10-frame JOBs, 12 with a trace context (5.7); a CIPW06 worker 4-frame JOBs whose
    fields are packed into one header (5.17).

    `max_version` plays an older broker (5.17, falling back): a message whose F0 is a later version is not a
    signature it speaks, so it is answered ERROR `unsupported-version` (check 2 of 5.12; F0 `CIPW01`, or the
    registered version to a registered worker, 5.9) and dropped: a READY does not register. Such messages are
    listed in `refused` (and reach next() with `refused` set)."""

    def __init__(self, endpoint: str, heartbeat_ms: int = 1000, context: zmq.Context | None = None,
                 schemas: Schemas = SCHEMA_SET, max_version: int = 6):
        self.context = context or zmq.Context.instance()
        self.endpoint = endpoint
        self.max_version = max_version
        self.refused: list[FromWorker] = []  # messages answered ERROR unsupported-version (max_version)
        self.interval = heartbeat_ms / 1000.0
        self.schemas = schemas
        self.silent = False
        self.acknowledge_drain = True
        self.registered: dict[bytes, FromWorker] = {}
        self.versions: dict[bytes, int] = {}  # routing id -> the version of its last READY (5.13)
        # routing id -> the version to speak to the worker in instead of its READY's: a test that a worker accepts an
        # older version's messages from the broker (the reference worker accepts any signature, W1). What the worker
        # may send stays bound to its READY's version.
        self.send_versions: dict[bytes, int] = {}
        self.jobs: dict[bytes, SentJob] = {}  # job id -> a job sent with job() whose last RESULT has not come yet
        self.answered_jobs: set[bytes] = set()  # job ids sent with job() whose last RESULT came
        self.cancelled_jobs: set[bytes] = set()  # job ids this broker sent CANCEL for
        self.errors: list[BaseException] = []
        self.inbox: list[FromWorker] = []
        self._received: "queue.Queue[FromWorker]" = queue.Queue()
        self._outbox: "queue.Queue[list[bytes]]" = queue.Queue()
        self._stop = threading.Event()
        self._counter = itertools.count(1)
        self._bound = threading.Event()
        self._bind_error: BaseException | None = None
        self._thread = threading.Thread(target=self._io, daemon=True, name="pybroker")
        self._thread.start()
        self._bound.wait(5)
        if self._bind_error:
            raise self._bind_error

    def _io(self) -> None:
        socket = self.context.socket(zmq.ROUTER)
        socket.setsockopt(zmq.LINGER, 0)
        socket.setsockopt(zmq.ROUTER_MANDATORY, 1)
        socket.setsockopt(zmq.ROUTER_HANDOVER, 1)
        try:
            socket.bind(self.endpoint)
        except zmq.ZMQError as e:
            self._bind_error = e
        self._bound.set()
        if self._bind_error:
            socket.close(0)
            return
        last_beat = time.monotonic()
        try:
            while not self._stop.is_set():
                while True:
                    try:
                        frames = self._outbox.get_nowait()
                    except queue.Empty:
                        break
                    try:
                        socket.send_multipart(frames, zmq.NOBLOCK)
                    except zmq.ZMQError:
                        pass  # EHOSTUNREACH: the worker is gone (6.7); a test notices through what it receives
                if not self.silent and time.monotonic() - last_beat >= self.interval:
                    for rid in list(self.registered):
                        try:
                            socket.send_multipart([rid, self.signature(rid), b"HEARTBEAT"], zmq.NOBLOCK)
                        except zmq.ZMQError:
                            pass
                    last_beat = time.monotonic()
                if socket.poll(5):
                    frames = socket.recv_multipart()
                    try:
                        m = self.check(frames[0], frames[1:])
                    except ProtocolViolation as e:
                        self.errors.append(e)
                        continue
                    if m.refused:
                        try:  # check 2 of 5.12: a version this broker does not speak
                            socket.send_multipart([m.routing_id, self.refusal_signature(m), b"ERROR",
                                                   b"unsupported-version",
                                                   f"this broker speaks CIPW01 to CIPW{self.max_version:02d}".encode()],
                                                  zmq.NOBLOCK)
                        except zmq.ZMQError:
                            pass
                    elif m.command == "DRAIN" and self.acknowledge_drain:
                        try:  # 5.5: a broker MUST acknowledge DRAIN (this one sends no JOB afterwards by itself)
                            socket.send_multipart([m.routing_id, self.signature(m.routing_id), b"DRAIN"], zmq.NOBLOCK)
                        except zmq.ZMQError:
                            pass
                    self._received.put(m)
        finally:
            socket.close(0)

    def version_of(self, rid: bytes) -> int:
        """The version this broker speaks to a worker in: its READY's (5.13), unless send_versions says otherwise."""
        return self.send_versions.get(rid, self.versions.get(rid, 1))

    def signature(self, rid: bytes) -> bytes:
        return WORKER_SIGNATURES[self.version_of(rid)]

    def refusal_signature(self, m: FromWorker) -> bytes:
        """F0 of the ERROR unsupported-version that answers a refused message (5.9): the registered version to a
        registered worker (not for a READY, which starts a new registration), else the message's version, which
        is `CIPW01` here because its F0 is not a signature this broker speaks."""
        if m.command != "READY" and m.routing_id in self.registered:
            return self.signature(m.routing_id)
        return CIPW

    def check(self, rid: bytes, frames: list[bytes]) -> FromWorker:
        violation(len(frames) >= 2 and frames[0] in WORKER_VERSIONS, "a worker message starts with CIPW01 to CIPW06 "
                  "(5, 5.13, 5.15, 5.16, 5.17)", frames)
        command = frames[1].decode("ascii", "replace")
        if WORKER_VERSIONS[frames[0]] > self.max_version and command != "READY":
            m = FromWorker(rid, frames, command, refused=True)
            self.refused.append(m)
            return m
        if command != "READY":
            version = WORKER_VERSIONS[frames[0]]
            violation(version <= self.versions.get(rid, 1), f"a worker registered with "
                      f"{WORKER_SIGNATURES[self.versions.get(rid, 1)]!r} sends no later version (9, 5.13, 5.15)",
                      frames)
        if command == "READY":
            violation(len(frames) >= 5, "READY has at least 5 frames (5.2)", frames)
            violation(is_decimal_frame(frames[2]) and 1 <= int(frames[2]) <= 1000, "READY capacity 1..1000", frames)
            violation(frames[3] == rid, f"READY F3 {frames[3]!r} equals the routing id {rid!r} (5.2)", frames)
            types = frames[4:]
            if WORKER_VERSIONS[frames[0]] >= 4:
                # 5.16: each type is followed by its definition, a JSON object defining that type (CIPW05 and CIPW06:
                # READY as in CIPW04).
                violation(len(frames) % 2 == 0, "a CIPW04 READY has each intent type followed by its definition",
                          frames)
                types = frames[4::2]
                for t, definition in zip(frames[4::2], frames[5::2]):
                    parsed = strict_loads(definition)
                    violation(isinstance(parsed, dict) and parsed.get("intent") == t.decode(),
                              "a CIPW04 definition is a JSON object whose \"intent\" is its type (5.16)", frames)
            for t in types:
                violation(1 <= len(t) <= 255, "an intent type is 1..255 bytes", frames)
            if WORKER_VERSIONS[frames[0]] > self.max_version:
                # Checked as a READY of its version all the same (it is one), but refused: check 2 comes first (5.12).
                m = FromWorker(rid, frames, command, refused=True)
                self.refused.append(m)
                return m
            m = FromWorker(rid, frames, command)
            self.registered[rid] = m
            self.versions[rid] = WORKER_VERSIONS[frames[0]]
            return m
        if command in ("HEARTBEAT", "DRAIN", "DISCONNECT"):
            violation(len(frames) == 2, f"{command} has exactly 2 frames (5.4-5.6)", frames)
            if command == "DISCONNECT":
                self.registered.pop(rid, None)
            return FromWorker(rid, frames, command)
        violation(command == "RESULT", f"a worker sends READY, RESULT, HEARTBEAT, DRAIN or DISCONNECT, not "
                  f"{command!r}", frames)
        violation(len(frames) == 5, "RESULT has exactly 5 frames (5.3)", frames)
        job_id, outcome, body = frames[2], frames[3].decode("ascii", "replace"), frames[4]
        violation(len(job_id) == 8, "RESULT F2 is an 8-byte job id", frames)
        outcomes = ("continue", "stop", "error") + (("cancelled",) if self.versions.get(rid, 1) >= 2 else ())
        violation(outcome in outcomes, f"RESULT outcome {outcome!r} (5.3, 5.13)", frames)
        violation(job_id not in self.answered_jobs, "a RESULT for a job after its last RESULT (5.11: exactly one "
                  "RESULT per JOB; 5.15: one per phase, up to the first that is not continue or the last phase's)",
                  frames)
        job = self.jobs.get(job_id)
        if job is not None:
            violation(job.rid == rid, f"a RESULT for a job sent to {job.rid!r} (5.11)", frames)
        parsed = strict_loads(body)
        if outcome == "cancelled":
            violation(job_id in self.cancelled_jobs, "a worker MUST NOT answer cancelled to a job that was not "
                      "cancelled (5.13)", frames)
            self.schemas.check("error.schema.json", parsed, "RESULT cancelled")
            violation(parsed["code"] == "cancelled", "the body of a cancelled RESULT has code cancelled (5.13)", frames)
        elif outcome == "error":
            self.schemas.check("error.schema.json", parsed, "RESULT error")
        else:
            self.schemas.check_interaction(parsed, f"RESULT {outcome}")
            if job is not None:
                violation(job.phase in parsed, f"the RESULT of a {job.phase} phase holds its {job.phase!r} key (5.11 "
                          f"step 6)", frames)
                violation(outcome == expected_outcome(job.phase, parsed),
                          f"outcome {outcome!r} breaks the outcome rule of 5.11 for a {job.phase} phase"
                          f"{f' (a job through {job.last})' if job.last != job.phase else ''}", frames)
        if job is None:
            return FromWorker(rid, frames, command)
        m = FromWorker(rid, frames, command, phase=job.phase)
        following = next_phase(job.phase)
        if outcome == "continue" and phase_order(job.phase) < phase_order(job.last) and following is not None:
            job.phase = following  # 5.15: the worker runs the next phase at once; its RESULT comes under this job id
            m.last = False
        else:
            self.jobs.pop(job_id, None)
            self.answered_jobs.add(job_id)
        return m

    # -- sending ------------------------------------------------------------------------------------------

    def send(self, rid: bytes, frames: list[bytes]) -> None:
        self._outbox.put([rid, *frames])

    def job(self, rid: bytes, intent_type: str, phase: str, body: Any, time_left: int | bytes = 3000,
            job_id: bytes | None = None, key: bytes = b"", attempt: int | bytes = 1, last: str | None = None,
            trace: tuple[bytes, bytes] | None = None) -> bytes:
        """Send a JOB (5.7; to a CIPW02 worker with key and attempt, 5.13; to a CIPW03 worker with the last phase
        `last` as F9, default `phase`, 5.15; to a CIPW05 worker with the trace context `trace` (traceparent,
        tracestate) as F10/F11, 10 frames without; to a CIPW06 worker packed, 5.17, the trace context at the end of
        the header); returns its job id. `last` needs a CIPW03 worker, `trace` a CIPW05 one; `trace=(b"", b"")` is
        the empty trace context a worker MUST also take as none (5.7)."""
        job_id = job_id or next(self._counter).to_bytes(8, "little")
        version = self.version_of(rid)
        assert last is None or version >= 3, "only a CIPW03 JOB has a last phase (5.15)"
        assert trace is None or version >= 5, "only a CIPW05 JOB has a trace context (5.7)"
        self.jobs[job_id] = SentJob(rid, intent_type, phase, last or phase)
        self.answered_jobs.discard(job_id)
        if version >= 6:
            assert isinstance(time_left, int) and isinstance(attempt, int), "a CIPW06 header holds integers (5.17)"
            header = pack_job_header(job_id, intent_type, phase, last or phase, time_left, attempt, key, trace)
            self.send(rid, [self.signature(rid), b"JOB", header, encode(body)])
            return job_id
        left = time_left if isinstance(time_left, bytes) else str(time_left).encode()
        frames = [self.signature(rid), b"JOB", job_id, intent_type.encode(), phase.encode(), left, encode(body)]
        if version >= 2:
            frames += [key, attempt if isinstance(attempt, bytes) else str(attempt).encode()]
        if version >= 3:
            frames.append((last or phase).encode())
        if version >= 5 and trace is not None:
            frames += list(trace)  # F10, F11 (5.7); a job without a trace context has 10 frames
        self.send(rid, frames)
        return job_id

    def cancel(self, rid: bytes, job_id: bytes) -> None:
        """CANCEL (5.13) in the worker's signature (CIPW02 or CIPW03); CIPW02 to a CIPW01 worker, which ignores it."""
        self.cancelled_jobs.add(job_id)
        self.send(rid, [self.signature(rid) if self.version_of(rid) >= 2 else CIPW2, b"CANCEL", job_id])

    # -- receiving ----------------------------------------------------------------------------------------

    def next(self, predicate: Callable[[FromWorker], bool] = lambda m: True, timeout: float = 15.0,
             what: str = "a message") -> FromWorker:
        self._raise_errors()
        for i, m in enumerate(self.inbox):
            if predicate(m):
                return self.inbox.pop(i)
        end = time.monotonic() + timeout
        while True:
            left = end - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"PyBroker: no {what} within {timeout} s (inbox: {self.inbox[-10:]})")
            try:
                m = self._received.get(timeout=min(left, 0.1))
            except queue.Empty:
                self._raise_errors()
                continue
            if predicate(m):
                return m
            self.inbox.append(m)

    def ready(self, timeout: float = 15.0) -> FromWorker:
        """The next READY this broker took (a refused one, see max_version, is not)."""
        return self.next(lambda m: m.command == "READY" and not m.refused, timeout, "READY")

    def refusal(self, timeout: float = 15.0) -> FromWorker:
        """The next message refused for its version (max_version): answered ERROR unsupported-version."""
        return self.next(lambda m: m.refused, timeout, "message in a version above max_version")

    def result(self, job_id: bytes, timeout: float = 15.0) -> FromWorker:
        """The next RESULT of job_id (in arrival order: a chained job's RESULTs one call after the other)."""
        m = self.next(lambda m: m.command == "RESULT" and m.job_id == job_id, timeout, f"RESULT {job_id!r}")
        if m.last:
            self.jobs.pop(job_id, None)
        return m

    def results(self, job_id: bytes, timeout: float = 15.0) -> list[FromWorker]:
        """Every RESULT of a job sent with job(), up to and including its last (5.15: one per phase it ran)."""
        out = [self.result(job_id, timeout)]
        while not out[-1].last:
            out.append(self.result(job_id, timeout))
        return out

    def expect_no_result(self, duration: float) -> None:
        end = time.monotonic() + duration
        while (left := end - time.monotonic()) > 0:
            try:
                self.inbox.append(self._received.get(timeout=left))
            except queue.Empty:
                pass
        self._raise_errors()
        results = [m for m in self.inbox if m.command == "RESULT"]
        violation(not results, f"unexpected RESULTs: {results}")

    def _raise_errors(self) -> None:
        if self.errors:
            raise self.errors[0]

    def close(self) -> None:
        self._stop.set()
        self._thread.join(5)


def expected_outcome(phase: str, body: dict) -> str:
    """The outcome rule of section 5.11."""
    if phase == "resolve":
        kinds = {r["kind"] for r in body.get("resolve", {}).values()}
        return "continue" if kinds <= {"success", "notRequired"} else "stop"
    if phase == "confirm":
        return "continue" if body.get("confirm", {}).get("code") == "ready" else "stop"
    return "stop"
