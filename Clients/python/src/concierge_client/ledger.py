"""The client's turn numbers, one entry per conversation (a port of the Swift client's ``ConversationLedger``).

A turn sent again with the same number never runs twice, so each new turn gets the number after the last one the
broker counted, every retry keeps it, and the count is learned from the broker (every turn's ending carries the
"conversation" object). When a turn's outcome is unknown, the next new turn reads the conversation first."""

from __future__ import annotations

import threading
from dataclasses import dataclass

from . import errors
from .errors import ClientError
from .reply import ConversationState, Reply

READ = 0  # the plan "read the conversation first"

# Codes with which the broker refuses a turn before it runs: it changed nothing, so the count is known.
REFUSALS = frozenset(
    {
        "bad-answer", "not-asked", "bad-option", "turn-mismatch", "unknown-conversation", "malformed",
        "bad-request-id", "bad-deadline", "too-large", "shutting-down", "duplicate-request", "unknown-intent",
        "busy", "unavailable", "unsupported-version", "unknown-command", "bad-trace-context",
    }
)  # fmt: skip


@dataclass
class Entry:
    last: int = 0
    in_flight: int | None = None
    uncertain: bool = False
    intent_type: str | None = None


class Ledger:
    """Thread-safe: both front ends share the rules, under a lock."""

    def __init__(self) -> None:
        self.entries: dict[str, Entry] = {}
        self._lock = threading.Lock()

    def begin(self, cid: str, starting: bool, intent_type: str | None = None) -> int:
        """The number of a new turn, or READ. Raises ``turn-in-flight`` while a turn of it is in flight."""
        with self._lock:
            entry = self.entries.get(cid)
            if entry is not None and entry.in_flight is not None:
                raise ClientError(errors.TURN_IN_FLIGHT, f"conversation {cid}: a turn is in flight; wait for its ending")
            if starting:
                self.entries[cid] = Entry(0, 1, False, intent_type)
                return 1
            if entry is None or entry.uncertain:
                return READ
            entry.in_flight = entry.last + 1
            return entry.in_flight

    def learned(self, state: ConversationState) -> None:
        with self._lock:
            self._learned(state)

    def _learned(self, state: ConversationState) -> None:
        entry = self.entries.setdefault(state.id, Entry())
        entry.last = state.turn
        entry.uncertain = False
        if state.intent_type:
            entry.intent_type = state.intent_type

    def forget(self, cid: str) -> None:
        with self._lock:
            entry = self.entries.get(cid)
            if entry is not None and entry.in_flight is None:
                del self.entries[cid]

    def ended(self, cid: str, turn: int, reply: Reply | None) -> None:
        """Turn ``turn`` ended with the broker's ending ``reply``, or (None) in a way that leaves it unknown."""
        with self._lock:
            entry = self.entries.get(cid)
            if entry is None or entry.in_flight != turn:
                return
            entry.in_flight = None
            body = reply.json if reply is not None else None
            conversation = body.get("conversation") if isinstance(body, dict) else None
            if isinstance(conversation, dict) and conversation.get("id") == cid:
                self._learned(ConversationState.from_json(conversation))
                return
            if reply is not None and reply.status == "final":
                entry.last = turn
                entry.uncertain = False
            elif reply is not None and reply.error_code in REFUSALS:
                entry.uncertain = False
            else:
                entry.uncertain = True

    def intent_type(self, cid: str) -> str | None:
        with self._lock:
            entry = self.entries.get(cid)
            return entry.intent_type if entry is not None else None
