"""``Client``: the synchronous, thread-safe front end."""

from __future__ import annotations

import queue
import time
from collections.abc import Callable, Generator, Iterator, Mapping, Sequence
from typing import Any, TypeVar

from . import machine, procedures
from ._base import ClientBase
from .errors import ClientError
from .procedures import Attempt, Op, Outcome, Query, Sleep
from .reply import ConversationState, ConversationTurn, Reply
from .retry import RetryPolicy

T = TypeVar("T")
_DEFAULT_TURN_RETRY = RetryPolicy()


class _End:
    __slots__ = ("error",)

    def __init__(self, error: ClientError | None) -> None:
        self.error = error


class _ThreadSink:
    """A caller's wait on a thread: the loop thread pushes, the caller takes."""

    def __init__(self) -> None:
        self.items: queue.SimpleQueue[Reply | _End] = queue.SimpleQueue()

    def push(self, reply: Reply) -> None:
        self.items.put(reply)

    def close(self, error: ClientError | None) -> None:
        self.items.put(_End(error))

    def get(self, deadline: float | None) -> Reply | _End:
        if deadline is None:
            return self.items.get()
        left = deadline - time.monotonic()
        try:
            return self.items.get(timeout=max(0.0, left))
        except queue.Empty:
            raise TimeoutError("no answer within the timeout") from None


def _deadline(timeout: float | None) -> float | None:
    return None if timeout is None else time.monotonic() + timeout


class Client(ClientBase):
    """Publishes intents to a Concierge broker (CIP/Client over ZeroMQ); safe to use from many threads.

    ``endpoints``: one frontend endpoint or several (brokers sharing a journal, in failover order). Requests in
    flight are kept while the client looks for a broker (up to ``reconnect_timeout`` seconds); when a connection
    completes its handshake again, the client asks STATUS about each (the sweep): those the broker lost end with
    ``ClientError`` ``broker-restarted``. ``timeout`` arguments bound the caller's wait only (``TimeoutError``; a
    request left waiting is cancelled at the broker)."""

    # -- requests ----------------------------------------------------------------------------------------------

    def request(
        self,
        intent: Mapping[str, Any],
        phase: str = "lifecycle",
        deadline: float | None = None,
        idempotency_key: str | None = None,
        retry: RetryPolicy | None = None,
        on_progress: Callable[[Reply], None] | None = None,
        traceparent: str | None = None,
        tracestate: str | None = None,
        *,
        request_id: str | None = None,
        timeout: float | None = None,
        definition_version: int | None = None,
    ) -> Reply:
        """Sends ``intent`` (``{"type": ..., "parameters": {...}}``) for ``phase`` and returns its ending (a final or
        error reply); a progress reply goes to ``on_progress``. ``deadline``: seconds until the broker's progress
        reply (None: the broker's default). With ``retry``, retryable endings are sent again (same key).
        ``definition_version`` asks for that version of the intent's definition (PROTOCOL.md 5.18): every job runs on
        a worker serving it or a compatible later one; None: the oldest version served."""
        trace = procedures.trace_context(traceparent, tracestate)
        proc = procedures.request(
            self.make_request_id, intent, phase, deadline, request_id, idempotency_key, retry, trace,
            definition_version,
        )
        return self._run(proc, on_progress, _deadline(timeout))

    def send(
        self,
        intent: Mapping[str, Any],
        phase: str = "lifecycle",
        deadline: float | None = None,
        idempotency_key: str | None = None,
        traceparent: str | None = None,
        tracestate: str | None = None,
        *,
        request_id: str | None = None,
        timeout: float | None = None,
        definition_version: int | None = None,
    ) -> Iterator[Reply]:
        """Sends one request and yields its replies as they come: at most one progress, then the final or error
        reply. Closing the iterator before the end cancels the request at the broker (CANCEL)."""
        rid = request_id or self.make_request_id()
        procedures.check_request_id(rid)
        trace = procedures.trace_context(traceparent, tracestate)
        frames = procedures.request_frames(rid, intent, phase, deadline, idempotency_key, trace, definition_version)
        return self._stream(Attempt(rid, frames, str(intent.get("type")), False, 1), _deadline(timeout))

    def cancel(self, request_id: str, *, timeout: float | None = None) -> Reply:
        """CANCEL (PROTOCOL.md 4.10.2); returns the request's ending: error ``cancelled``, or the final (or other
        error) that came first. For a request not in flight here, the broker answers as STATUS would."""
        procedures.check_request_id(request_id)
        return self._wait_one(lambda s: lambda m, c, now: m.cancel(request_id, s, now, c), _deadline(timeout))

    def status(self, request_id: str, *, timeout: float | None = None) -> Reply:
        """STATUS (4.3): progress while it runs, then its stored ending; error ``unknown-request`` if unknown."""
        return self._wait_one(lambda s: lambda m, c, now: m.status(request_id, s, now, c), _deadline(timeout))

    def ping(self, *, timeout: float | None = None) -> None:
        """A round trip to the broker."""
        sink = _ThreadSink()
        self._driver.submit(lambda m, c, now: m.ping(sink, now, c), sink.close)
        item = sink.get(_deadline(timeout))
        if isinstance(item, _End) and item.error is not None:
            raise item.error

    # -- conversations -----------------------------------------------------------------------------------------

    def start_conversation(
        self,
        intent: Mapping[str, Any],
        id: str | None = None,
        record: bool = False,
        confirm: bool = False,
        deadline: float | None = None,
        retry: RetryPolicy | None = _DEFAULT_TURN_RETRY,
        on_progress: Callable[[Reply], None] | None = None,
        traceparent: str | None = None,
        tracestate: str | None = None,
        *,
        timeout: float | None = None,
    ) -> ConversationTurn:
        """Starts a conversation (turn 1 runs the lifecycle). Turns retry by default: a turn sent again with its
        number never runs twice. The broker's errors are raised as ClientError with its code."""
        proc = procedures.first_turn(
            self.make_request_id, self._ledger, intent, id, record, confirm, deadline, retry, traceparent, tracestate
        )
        return self._run(proc, on_progress, _deadline(timeout))

    def send_answers(
        self,
        conversation: str,
        answers: Sequence[Mapping[str, Any]],
        deadline: float | None = None,
        retry: RetryPolicy | None = _DEFAULT_TURN_RETRY,
        on_progress: Callable[[Reply], None] | None = None,
        traceparent: str | None = None,
        tracestate: str | None = None,
        *,
        timeout: float | None = None,
    ) -> ConversationTurn:
        """Sends Answer objects (PROTOCOL.md 4.11.2, applied in order) as the conversation's next turn."""
        proc = procedures.answer_turn(
            self.make_request_id, self._ledger, conversation, answers, deadline, retry, traceparent, tracestate
        )
        return self._run(proc, on_progress, _deadline(timeout))

    def answer(self, conversation: str, parameter: str, value: Any, **kw: Any) -> ConversationTurn:
        """A value for ``parameter`` as the next turn."""
        return self.send_answers(conversation, [{"parameter": parameter, "value": value}], **kw)

    def choose(self, conversation: str, parameter: str, option: int, **kw: Any) -> ConversationTurn:
        """Option ``option`` (from 0) of ``parameter``'s disambiguation as the next turn."""
        return self.send_answers(conversation, [{"parameter": parameter, "option": option}], **kw)

    def confirm(self, conversation: str, yes: bool, parameter: str | None = None, **kw: Any) -> ConversationTurn:
        """Yes or no to ``parameter``'s confirmation request, or (no parameter) to the whole intent."""
        return self.send_answers(conversation, [procedures.confirm_answer(yes, parameter)], **kw)

    def conversation(self, id: str, *, timeout: float | None = None) -> ConversationState:
        """Reads a conversation (CONVERSATION)."""
        return self._run(procedures.read_conversation(self._ledger, id, False), None, _deadline(timeout))

    def end_conversation(self, id: str, *, timeout: float | None = None) -> ConversationState:
        """Ends a conversation (END; ending ``cancelled``) and returns it as it ended."""
        return self._run(procedures.read_conversation(self._ledger, id, True), None, _deadline(timeout))

    # -- lifetime ----------------------------------------------------------------------------------------------

    def close(self) -> None:
        """Closes the connection; operations in flight fail with ClientError ``closed``."""
        self._driver.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- running operations ------------------------------------------------------------------------------------

    def _run(
        self, proc: Generator[Op, Outcome | None, T], on_progress: Callable[[Reply], None] | None, deadline: float | None
    ) -> T:
        result: Outcome | None = None
        while True:
            try:
                op = proc.send(result)
            except StopIteration as stop:
                value: T = stop.value
                return value
            if isinstance(op, Sleep):
                time.sleep(op.seconds if deadline is None else min(op.seconds, max(0.0, deadline - time.monotonic())))
                result = None
            elif isinstance(op, Query):
                q = op
                result = self._outcome(
                    lambda s: lambda m, c, now: m.conversation_query(q.conversation_id, q.end, s, now, c), deadline
                )
            else:
                result = self._attempt(op, on_progress, deadline)

    def _attempt(self, op: Attempt, on_progress: Callable[[Reply], None] | None, deadline: float | None) -> Outcome:
        last: Reply | None = None
        for reply in self._stream(op, deadline, raise_errors=False):
            if isinstance(reply, ClientError):
                return reply
            if reply.is_final:
                last = reply
            elif on_progress is not None:
                on_progress(reply.with_attempts(op.attempt))
        assert last is not None
        return last

    def _stream(self, op: Attempt, deadline: float | None, raise_errors: bool = True) -> Iterator[Any]:
        """Sends the request now (not at the first iteration: a caller may cancel it before reading), and returns
        the iterator over its replies."""
        sink = _ThreadSink()
        serial = self._driver.next_serial()
        self._driver.submit(
            lambda m, c, now: m.request(op.request_id, serial, op.frames, op.intent_type, op.is_turn, sink, now, c),
            sink.close,
        )
        return self._replies(op.request_id, serial, sink, deadline, raise_errors)

    def _replies(
        self, rid: str, serial: int, sink: _ThreadSink, deadline: float | None, raise_errors: bool
    ) -> Iterator[Any]:
        ended = False
        try:
            while True:
                item = sink.get(deadline)
                if isinstance(item, _End):
                    ended = True
                    if item.error is not None:
                        if raise_errors:
                            raise item.error
                        yield item.error
                    return
                yield item
        finally:
            if not ended:
                self._driver.submit(lambda m, c, now: m.abandon(rid, serial, now, c), lambda e: None)

    def _outcome(
        self, command: Callable[[_ThreadSink], Callable[[machine.Machine, machine.Connection, float], None]],
        deadline: float | None,
    ) -> Outcome:  # fmt: skip
        sink = _ThreadSink()
        self._driver.submit(command(sink), sink.close)
        item = sink.get(deadline)
        if isinstance(item, _End):
            return item.error or ClientError("transport", "ended without an answer")
        return item

    def _wait_one(
        self, command: Callable[[_ThreadSink], Callable[[machine.Machine, machine.Connection, float], None]],
        deadline: float | None,
    ) -> Reply:  # fmt: skip
        outcome = self._outcome(command, deadline)
        if isinstance(outcome, ClientError):
            raise outcome
        return outcome
