"""concierge_client: publish intents to Concierge brokers from Python (CIP/Client over ZeroMQ).

``Client`` (sync, thread-safe) and ``AsyncClient`` (asyncio) share one API and one set of rules (the Swift
client's): progress and final replies, lifecycles and conversations, idempotency keys with a ``RetryPolicy``,
cancellation, the broker's pushback, reconnect with the STATUS sweep, failover across endpoints, CURVE, and W3C
trace context (CIPC04). See Docs/PYTHON-CLIENT.md."""

from . import errors
from .aio import AsyncClient
from .client import Client
from .driver import CurveKeys
from .errors import ClientError
from .procedures import new_conversation_id, new_key
from .reply import Ask, ConversationState, ConversationTurn, Reply
from .retry import RETRYABLE_CODES, RetryPolicy, is_retryable
from .wire import TraceContext

__all__ = [
    "Ask",
    "AsyncClient",
    "Client",
    "ClientError",
    "ConversationState",
    "ConversationTurn",
    "CurveKeys",
    "RETRYABLE_CODES",
    "Reply",
    "RetryPolicy",
    "TraceContext",
    "errors",
    "is_retryable",
    "new_conversation_id",
    "new_key",
]
__version__ = "0.1.0"
