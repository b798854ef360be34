"""The client's multi-step operations written once, without I/O, as generators that yield what they need done
(an attempt, a wait, a conversation query) and get its result back; ``Client`` runs them on the calling thread and
``AsyncClient`` on the event loop, so retries, backoff and turn numbering are the same in both."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Generator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Union

from . import errors, wire
from .errors import ClientError
from .ledger import READ, Ledger
from .reply import ConversationState, ConversationTurn, Reply
from .retry import NO_RETRY, RetryPolicy, is_retryable


@dataclass(frozen=True)
class Attempt:
    """Send a REQUEST or TURN and wait for its ending (progress replies go to the caller's callback)."""

    request_id: str
    frames: list[bytes]
    intent_type: str | None
    is_turn: bool
    attempt: int


@dataclass(frozen=True)
class Sleep:
    seconds: float


@dataclass(frozen=True)
class Query:
    """CONVERSATION (``end`` False) or END about a conversation, and its answer."""

    conversation_id: str
    end: bool


Op = Union[Attempt, Sleep, Query]
Outcome = Union[Reply, ClientError]


def new_key() -> str:
    """A random idempotency key (a UUID), as generated for a retry policy without a caller's key."""
    return str(uuid.uuid4())


def new_conversation_id() -> str:
    return "c-" + new_key()


def check_request_id(request_id: str) -> None:
    if not 1 <= len(request_id.encode()) <= wire.MAX_ID:
        raise ClientError(errors.BAD_REQUEST_ID, "a request id has 1 to 255 bytes")


def check_conversation_id(cid: str) -> None:
    raw = cid.encode()
    if not (1 <= len(raw) <= wire.MAX_ID and all(0x21 <= b <= 0x7E for b in raw)):
        raise ClientError(
            errors.BAD_CONVERSATION_ID, f"a conversation id has 1 to 255 bytes of printable ASCII, not {cid[:64]!r}"
        )


def trace_context(traceparent: str | None, tracestate: str | None) -> wire.TraceContext | None:
    if traceparent is None and tracestate is None:
        return None
    return wire.TraceContext(traceparent or "", tracestate or "")


def request_frames(
    request_id: str,
    intent: Mapping[str, Any],
    phase: str,
    deadline: float | None,
    key: str | None,
    trace: wire.TraceContext | None,
    definition_version: int | None = None,
) -> list[bytes]:
    if phase not in wire.PHASES:
        raise ValueError(f"phase is one of {wire.PHASES}, not {phase!r}")
    intent_type = intent.get("type")
    if not isinstance(intent_type, str):
        raise ValueError('an intent is {"type": ..., "parameters": {...}}')
    body = wire.encode_body({"intent": dict(intent)})
    if definition_version is not None:
        # PROTOCOL.md 5.18: F3 `Type@N` asks for version N of the definition; the body keeps the type itself.
        if isinstance(definition_version, bool) or not isinstance(definition_version, int) \
                or not 1 <= definition_version <= 2**31 - 1:
            raise ValueError("definition_version is a whole number from 1")
        intent_type = f"{intent_type}@{definition_version}"
    return wire.request(request_id, intent_type, phase, deadline, body, key, trace)


def request(
    new_id: Any,
    intent: Mapping[str, Any],
    phase: str,
    deadline: float | None,
    request_id: str | None,
    idempotency_key: str | None,
    retry: RetryPolicy | None,
    trace: wire.TraceContext | None,
    definition_version: int | None = None,
) -> Generator[Op, Outcome | None, Reply]:
    """A request's attempts: with a policy, retryable endings are sent again after the backoff, with the same key
    (generated if none was given) and body and a new request id."""
    policy = retry or NO_RETRY
    key = idempotency_key if idempotency_key is not None or retry is None else new_key()
    attempt = 1
    while True:
        rid = request_id if attempt == 1 and request_id is not None else str(new_id())
        check_request_id(rid)
        frames = request_frames(rid, intent, phase, deadline, key, trace, definition_version)
        outcome = yield Attempt(rid, frames, str(intent.get("type")), False, attempt)
        assert outcome is not None
        code = _code(outcome, attempt)
        if attempt < policy.max_attempts and code is not None and is_retryable(code):
            yield Sleep(policy.backoff(attempt))
            attempt += 1
            continue
        if isinstance(outcome, ClientError):
            raise outcome
        return outcome.with_attempts(attempt)


def _code(outcome: Outcome, attempt: int) -> str | None:
    if isinstance(outcome, ClientError):
        outcome.attempts = attempt
        return outcome.code
    return outcome.error_code


def read_conversation(ledger: Ledger, cid: str, end: bool) -> Generator[Op, Outcome | None, ConversationState]:
    check_conversation_id(cid)
    outcome = yield Query(cid, end)
    assert outcome is not None
    if isinstance(outcome, ClientError):
        raise outcome
    if outcome.status != "final":
        error = ClientError.from_reply(outcome)
        if error.code == errors.UNKNOWN_CONVERSATION:
            ledger.forget(cid)
        raise error
    body = outcome.json
    if not isinstance(body, dict):
        raise ClientError(errors.TRANSPORT, f"conversation {cid}: the answer is not a Conversation object")
    state = ConversationState.from_json(body)
    ledger.learned(state)
    return state


def answers_body(answers: Sequence[Mapping[str, Any]]) -> bytes:
    if not answers:
        raise ClientError(errors.BAD_ANSWER, "a turn sends at least one answer")
    if len(answers) == 1:
        return wire.encode_body(dict(answers[0]))
    return wire.encode_body({"answers": [dict(a) for a in answers]})


def turn(
    new_id: Any,
    ledger: Ledger,
    cid: str,
    starting: bool,
    intent_type: str | None,
    body: bytes,
    flags: str,
    deadline: float | None,
    retry: RetryPolicy | None,
    trace: wire.TraceContext | None,
) -> Generator[Op, Outcome | None, ConversationTurn]:
    """One turn: its number from the ledger (reading the conversation first when the last turn's outcome is
    unknown), then its attempts, all with that number."""
    check_conversation_id(cid)
    number = ledger.begin(cid, starting, intent_type)
    if number == READ:
        yield from read_conversation(ledger, cid, False)
        number = ledger.begin(cid, False)
        if number == READ:
            raise ClientError(errors.TURN_MISMATCH, f"conversation {cid}: no turn to send")
    ending: Reply | None = None
    try:
        key = intent_type or ledger.intent_type(cid)
        policy = retry or NO_RETRY
        attempt = 1
        while True:
            rid = str(new_id())
            frames = wire.turn(rid, cid, number, deadline, body, flags, trace)
            outcome = yield Attempt(rid, frames, key, True, attempt)
            assert outcome is not None
            code = _code(outcome, attempt)
            if attempt < policy.max_attempts and code is not None and is_retryable(code):
                yield Sleep(policy.backoff(attempt))
                attempt += 1
                continue
            if isinstance(outcome, ClientError):
                raise outcome
            reply = outcome.with_attempts(attempt)
            ending = reply
            if reply.status != "final":
                raise ClientError.from_reply(reply)
            conversation = reply.json.get("conversation") if isinstance(reply.json, dict) else None
            state = ConversationState.from_json(conversation) if isinstance(conversation, dict) else None
            return ConversationTurn(cid, number, reply, state)
    finally:
        ledger.ended(cid, number, ending)


def turn_flags(record: bool, confirm: bool) -> str:
    return " ".join(word for word, on in (("record", record), ("confirm", confirm)) if on)


def first_turn(
    make_request_id: Callable[[], str],
    ledger: Ledger,
    intent: Mapping[str, Any],
    cid: str | None,
    record: bool,
    confirm: bool,
    deadline: float | None,
    retry: RetryPolicy | None,
    traceparent: str | None,
    tracestate: str | None,
) -> Generator[Op, Outcome | None, ConversationTurn]:
    """Turn 1 of a conversation (id ``cid``, or a new one): the intent as an Interaction, the flags."""
    itype = intent.get("type")
    return turn(
        make_request_id, ledger, cid or new_conversation_id(), True, itype if isinstance(itype, str) else None,
        wire.encode_body({"intent": dict(intent)}), turn_flags(record, confirm), deadline, retry,
        trace_context(traceparent, tracestate),
    )  # fmt: skip


def answer_turn(
    make_request_id: Callable[[], str],
    ledger: Ledger,
    cid: str,
    answers: Sequence[Mapping[str, Any]],
    deadline: float | None,
    retry: RetryPolicy | None,
    traceparent: str | None,
    tracestate: str | None,
) -> Generator[Op, Outcome | None, ConversationTurn]:
    """A later turn of conversation ``cid``: Answer objects (PROTOCOL.md 4.11.2), applied in order."""
    return turn(
        make_request_id, ledger, cid, False, None, answers_body(answers), "", deadline, retry,
        trace_context(traceparent, tracestate),
    )  # fmt: skip


def confirm_answer(yes: bool, parameter: str | None) -> dict[str, Any]:
    """Yes or no to ``parameter``'s confirmation request, or (no parameter) to the whole intent."""
    return {"confirm": yes} if parameter is None else {"parameter": parameter, "confirm": yes}
