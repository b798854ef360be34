"""The broker's pushback (PROTOCOL.md 6.3), heeded per intent type: at most ``pushback_rate`` requests per second
for ``pushback_ms``; the rest fail at once, unsent, with ``throttled`` (as the Swift client's ``Pushback``)."""

from __future__ import annotations

import json
from dataclasses import dataclass

LONGEST_HOLD_MS = 60_000


@dataclass
class Hint:
    rate: int
    milliseconds: int

    @classmethod
    def from_error_body(cls, body: bytes) -> Hint | None:
        try:
            obj = json.loads(body)
        except ValueError:
            return None
        if not isinstance(obj, dict):
            return None
        rate, ms = obj.get("pushback_rate"), obj.get("pushback_ms")
        if isinstance(rate, int) and isinstance(ms, int) and rate > 0 and ms > 0:
            return cls(rate, ms)
        return None


class Pushback:
    """A token bucket with a burst of a hundredth of a second's worth (at least one request)."""

    def __init__(self) -> None:
        self.rate = 0.0
        self.until = 0.0
        self.tokens = 0.0
        self.refilled_at = 0.0
        self.refused = 0

    def is_active(self, now: float) -> bool:
        return now < self.until

    @staticmethod
    def burst(rate: float) -> float:
        return max(1.0, rate / 100)

    def heed(self, hint: Hint, now: float) -> None:
        new_rate = float(max(1, hint.rate))
        if self.is_active(now):
            self._refill(now)
            self.tokens = min(self.tokens, self.burst(new_rate))
        else:
            self.tokens = self.burst(new_rate)
            self.refilled_at = now
        self.rate = new_rate
        self.until = now + min(max(1, hint.milliseconds), LONGEST_HOLD_MS) / 1000.0

    def admit(self, now: float) -> bool:
        if not self.is_active(now):
            return True
        self._refill(now)
        if self.tokens >= 1:
            self.tokens -= 1
            return True
        self.refused += 1
        return False

    def _refill(self, now: float) -> None:
        if now > self.refilled_at:
            self.tokens = min(self.burst(self.rate), self.tokens + (now - self.refilled_at) * self.rate)
            self.refilled_at = now
