"""When and how often a request is sent again after a failure that may be temporary (as the Swift client's
``RetryPolicy``)."""

from __future__ import annotations

import random
from dataclasses import dataclass

from . import errors

# The broker's retryable codes and the client's own: each a failure after which the same key may run, or has run,
# at most once (after unavailable and throttled nothing ran).
RETRYABLE_CODES: frozenset[str] = frozenset(
    {
        "busy",
        "worker-lost",
        "timeout",
        "outcome-unknown",
        "unavailable",
        errors.BROKER_RESTARTED,
        errors.CONNECTION_LOST,
        errors.THROTTLED,
    }
)


def is_retryable(code: str) -> bool:
    """Whether an error with this code (a reply's error code, or a ClientError's) is retried."""
    return code in RETRYABLE_CODES


@dataclass(frozen=True)
class RetryPolicy:
    """Attempts in all (the first included), and the backoff between them: the wait before retry n (1 for the
    second attempt) is ``min(max_backoff, initial_backoff * multiplier ** (n - 1))``, less a random part of up to
    ``jitter`` of it. Durations in seconds. Every attempt carries the same idempotency key and body and a request id
    of its own; without a caller's key one is generated."""

    max_attempts: int = 3
    initial_backoff: float = 0.1
    multiplier: float = 2.0
    max_backoff: float = 2.0
    jitter: float = 0.2

    def __post_init__(self) -> None:
        # Clamped as the Swift policy clamps them.
        object.__setattr__(self, "max_attempts", max(1, self.max_attempts))
        object.__setattr__(self, "initial_backoff", max(0.0, self.initial_backoff))
        object.__setattr__(self, "multiplier", max(1.0, self.multiplier) if self.multiplier == self.multiplier else 1.0)
        object.__setattr__(self, "max_backoff", max(0.0, self.max_backoff))
        jitter = self.jitter if self.jitter == self.jitter else 0.0
        object.__setattr__(self, "jitter", min(1.0, max(0.0, jitter)))

    def base_backoff(self, retry: int) -> float:
        """The wait before retry ``retry`` without jitter."""
        try:
            value = self.initial_backoff * self.multiplier ** max(0, retry - 1)
        except OverflowError:
            return self.max_backoff
        return min(self.max_backoff, value)

    def backoff(self, retry: int, rng: random.Random | None = None) -> float:
        """The wait before retry ``retry``, jitter included: uniform in ``base * (1 - jitter) .. base``."""
        base = self.base_backoff(retry)
        if self.jitter <= 0 or base <= 0:
            return base
        fraction = (rng or random).random()
        return base - base * self.jitter * fraction


NO_RETRY = RetryPolicy(max_attempts=1)
