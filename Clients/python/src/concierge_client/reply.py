"""Replies and conversation states, as the broker sends them."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Reply:
    """One answer of the broker to a request, a STATUS query or a CANCEL: ``status`` is ``final`` (the Interaction),
    ``progress`` (the deadline passed, the work goes on) or ``error`` (``{"code", "message"}``)."""

    request_id: str
    status: str
    phase: str
    body: bytes
    is_replay: bool = False
    attempts: int = 1

    @property
    def is_final(self) -> bool:
        """Whether this reply ends the request (final or error)."""
        return self.status != "progress"

    @property
    def json(self) -> Any:
        """The body parsed as JSON (None if it is not JSON)."""
        try:
            return json.loads(self.body)
        except ValueError:
            return None

    @property
    def error_code(self) -> str | None:
        """For an error reply, the broker's stable error code."""
        if self.status != "error":
            return None
        body = self.json
        code = body.get("code") if isinstance(body, dict) else None
        return code if isinstance(code, str) else None

    def with_attempts(self, attempts: int) -> Reply:
        return Reply(self.request_id, self.status, self.phase, self.body, self.is_replay, attempts)


@dataclass(frozen=True)
class Ask:
    """One parameter a conversation asks about."""

    parameter: str
    kind: str
    options: list[Any] = field(default_factory=list)
    asks: int = 1


@dataclass(frozen=True)
class ConversationState:
    """A conversation as the broker keeps it (``Schemas/json/conversation.schema.json``)."""

    id: str
    intent_type: str
    turn: int
    phase: str
    asking: list[Ask]
    max_asks: int
    intent: Any
    ending: str | None
    ending_parameter: str | None
    ending_code: str | None
    raw: dict[str, Any]

    @property
    def is_ended(self) -> bool:
        return self.phase == "ended"

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> ConversationState:
        asking = [
            Ask(str(a.get("parameter", "")), str(a.get("kind", "")), list(a.get("options", [])), _int(a.get("asks"), 1))
            for a in obj.get("asking", [])
            if isinstance(a, dict)
        ]
        return cls(
            id=str(obj.get("id", "")),
            intent_type=str(obj.get("intentType", "")),
            turn=_int(obj.get("turn"), 0),
            phase=str(obj.get("state", obj.get("phase", ""))),
            asking=asking,
            max_asks=_int(obj.get("maxAsks"), 0),
            intent=obj.get("intent"),
            ending=obj.get("ending"),
            ending_parameter=obj.get("endingParameter"),
            ending_code=obj.get("endingCode"),
            raw=obj,
        )


@dataclass(frozen=True)
class ConversationTurn:
    """The ending of one conversation turn: its final reply and the conversation after it."""

    conversation_id: str
    number: int
    reply: Reply
    state: ConversationState | None

    @property
    def interaction(self) -> Any:
        return self.reply.json

    @property
    def asking(self) -> list[Ask]:
        return self.state.asking if self.state is not None else []

    @property
    def is_ended(self) -> bool:
        return self.state is not None and self.state.is_ended

    @property
    def is_confirming(self) -> bool:
        return self.state is not None and self.state.phase == "confirming"


def _int(value: Any, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default
