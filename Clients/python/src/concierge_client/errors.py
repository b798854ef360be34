"""Errors of the client itself, with stable codes named as the Swift client's (``ClientError.Code``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .reply import ConversationState, Reply

# The client's own codes (never on the wire), as the Swift client names them.
CONNECTION_LOST = "connection-lost"
BROKER_RESTARTED = "broker-restarted"
CLOSED = "closed"
DUPLICATE_REQUEST = "duplicate-request"
HANDSHAKE_FAILED = "handshake-failed"
CANCEL_UNSUPPORTED = "cancel-unsupported"
BAD_REQUEST_ID = "bad-request-id"
THROTTLED = "throttled"
TRANSPORT = "transport"
BAD_CONVERSATION_ID = "bad-conversation-id"
TURN_IN_FLIGHT = "turn-in-flight"
CONVERSATIONS_UNSUPPORTED = "conversations-unsupported"
BAD_TRACE_CONTEXT = "bad-trace-context"
# The broker's conversation codes, raised by the conversation calls with the broker's error reply.
UNKNOWN_CONVERSATION = "unknown-conversation"
CONVERSATION_ENDED = "conversation-ended"
TURN_MISMATCH = "turn-mismatch"
NOT_ASKED = "not-asked"
BAD_OPTION = "bad-option"
BAD_ANSWER = "bad-answer"
TOO_MANY_ASKS = "too-many-asks"


class ClientError(Exception):
    """A failure of the client (errors the broker answers arrive as a :class:`Reply` with ``status == "error"``,
    except from the conversation calls, which raise them as a ClientError carrying the reply).

    ``code`` is stable: compare it with the module's constants (``CONNECTION_LOST``, ``BROKER_RESTARTED``, ...) or
    a broker error code. ``attempts`` counts the attempts a request with a retry policy made."""

    def __init__(self, code: str, message: str, attempts: int = 1, reply: Reply | None = None) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.attempts = attempts
        self.reply = reply

    @classmethod
    def from_reply(cls, reply: Reply) -> ClientError:
        """The broker's error reply as an error: its code and message."""
        body: Any = reply.json
        code = body.get("code", "internal") if isinstance(body, dict) else "internal"
        message = body.get("message", "") if isinstance(body, dict) else reply.body[:200].decode("utf-8", "replace")
        return cls(str(code), str(message), reply.attempts, reply)

    @property
    def conversation(self) -> ConversationState | None:
        """The conversation as the broker described it in its error reply (None if it did not)."""
        from .reply import ConversationState

        body: Any = self.reply.json if self.reply is not None else None
        if isinstance(body, dict) and isinstance(body.get("conversation"), dict):
            return ConversationState.from_json(body["conversation"])
        return None

    def __str__(self) -> str:
        text = f"{self.code}: {self.message}"
        return f"{text} (after {self.attempts} attempts)" if self.attempts > 1 else text
