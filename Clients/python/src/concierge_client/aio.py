"""``AsyncClient``: the asyncio front end, with the same API as ``Client`` (coroutines and async iterators).

The socket lives on the client's loop thread, as for ``Client`` (and the Swift client); answers reach the event
loop through ``call_soon_threadsafe``. Cancelling the task that awaits ``request`` (or leaving ``send``'s iterator
before its end) sends CANCEL for the request in flight, as the Swift client does."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Generator, Mapping, Sequence
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


class _LoopSink:
    """A caller's wait on an event loop: the loop thread pushes through call_soon_threadsafe."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.items: asyncio.Queue[Reply | _End] = asyncio.Queue()

    def _put(self, item: Reply | _End) -> None:
        try:
            self.loop.call_soon_threadsafe(self.items.put_nowait, item)
        except RuntimeError:
            pass  # the event loop is closed: nobody waits any more

    def push(self, reply: Reply) -> None:
        self._put(reply)

    def close(self, error: ClientError | None) -> None:
        self._put(_End(error))


class AsyncClient(ClientBase):
    """The asyncio twin of :class:`concierge_client.Client` (same arguments, same semantics)."""

    async def request(
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
        """See :meth:`Client.request`."""
        trace = procedures.trace_context(traceparent, tracestate)
        proc = procedures.request(
            self.make_request_id, intent, phase, deadline, request_id, idempotency_key, retry, trace,
            definition_version,
        )
        return await asyncio.wait_for(self._run(proc, on_progress), timeout)

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
    ) -> AsyncIterator[Reply]:
        """See :meth:`Client.send`: sends now (call it from a coroutine) and returns an async iterator over the
        replies (``async for reply in client.send(...)``)."""
        rid = request_id or self.make_request_id()
        procedures.check_request_id(rid)
        trace = procedures.trace_context(traceparent, tracestate)
        frames = procedures.request_frames(rid, intent, phase, deadline, idempotency_key, trace, definition_version)
        return self._raising(self._stream(Attempt(rid, frames, str(intent.get("type")), False, 1)), timeout)

    async def _raising(self, replies: AsyncIterator[Reply | ClientError], timeout: float | None) -> AsyncIterator[Reply]:
        loop = asyncio.get_running_loop()
        end = None if timeout is None else loop.time() + timeout
        iterator = replies.__aiter__()
        try:
            while True:
                left = None if end is None else max(0.0, end - loop.time())
                try:
                    item = await asyncio.wait_for(iterator.__anext__(), left)
                except StopAsyncIteration:
                    return
                if isinstance(item, ClientError):
                    raise item
                yield item
        finally:
            await iterator.aclose()  # type: ignore[attr-defined]

    async def cancel(self, request_id: str, *, timeout: float | None = None) -> Reply:
        """See :meth:`Client.cancel`."""
        procedures.check_request_id(request_id)
        return await asyncio.wait_for(self._wait_one(lambda s: lambda m, c, now: m.cancel(request_id, s, now, c)), timeout)

    async def status(self, request_id: str, *, timeout: float | None = None) -> Reply:
        """See :meth:`Client.status`."""
        return await asyncio.wait_for(self._wait_one(lambda s: lambda m, c, now: m.status(request_id, s, now, c)), timeout)

    async def ping(self, *, timeout: float | None = None) -> None:
        """See :meth:`Client.ping`."""
        sink = _LoopSink(asyncio.get_running_loop())
        self._driver.submit(lambda m, c, now: m.ping(sink, now, c), sink.close)
        item = await asyncio.wait_for(sink.items.get(), timeout)
        if isinstance(item, _End) and item.error is not None:
            raise item.error

    async def start_conversation(
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
        """See :meth:`Client.start_conversation`."""
        proc = procedures.first_turn(
            self.make_request_id, self._ledger, intent, id, record, confirm, deadline, retry, traceparent, tracestate
        )
        return await asyncio.wait_for(self._run(proc, on_progress), timeout)

    async def send_answers(
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
        """See :meth:`Client.send_answers`."""
        proc = procedures.answer_turn(
            self.make_request_id, self._ledger, conversation, answers, deadline, retry, traceparent, tracestate
        )
        return await asyncio.wait_for(self._run(proc, on_progress), timeout)

    async def answer(self, conversation: str, parameter: str, value: Any, **kw: Any) -> ConversationTurn:
        """See :meth:`Client.answer`."""
        return await self.send_answers(conversation, [{"parameter": parameter, "value": value}], **kw)

    async def choose(self, conversation: str, parameter: str, option: int, **kw: Any) -> ConversationTurn:
        """See :meth:`Client.choose`."""
        return await self.send_answers(conversation, [{"parameter": parameter, "option": option}], **kw)

    async def confirm(
        self, conversation: str, yes: bool, parameter: str | None = None, **kw: Any
    ) -> ConversationTurn:
        """See :meth:`Client.confirm`."""
        return await self.send_answers(conversation, [procedures.confirm_answer(yes, parameter)], **kw)

    async def conversation(self, id: str, *, timeout: float | None = None) -> ConversationState:
        """See :meth:`Client.conversation`."""
        return await asyncio.wait_for(self._run(procedures.read_conversation(self._ledger, id, False), None), timeout)

    async def end_conversation(self, id: str, *, timeout: float | None = None) -> ConversationState:
        """See :meth:`Client.end_conversation`."""
        return await asyncio.wait_for(self._run(procedures.read_conversation(self._ledger, id, True), None), timeout)

    async def close(self) -> None:
        """Closes the connection; operations in flight fail with ClientError ``closed``."""
        await asyncio.get_running_loop().run_in_executor(None, self._driver.close)

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # -- running operations ------------------------------------------------------------------------------------

    async def _run(self, proc: Generator[Op, Outcome | None, T], on_progress: Callable[[Reply], None] | None) -> T:
        result: Outcome | None = None
        while True:
            try:
                op = proc.send(result)
            except StopIteration as stop:
                value: T = stop.value
                return value
            if isinstance(op, Sleep):
                await asyncio.sleep(op.seconds)
                result = None
            elif isinstance(op, Query):
                q = op
                result = await self._outcome(
                    lambda s: lambda m, c, now: m.conversation_query(q.conversation_id, q.end, s, now, c)
                )
            else:
                result = await self._attempt(op, on_progress)

    async def _attempt(self, op: Attempt, on_progress: Callable[[Reply], None] | None) -> Outcome:
        last: Reply | None = None
        async for reply in self._stream(op):
            if isinstance(reply, ClientError):
                return reply
            if reply.is_final:
                last = reply
            elif on_progress is not None:
                on_progress(reply.with_attempts(op.attempt))
        assert last is not None
        return last

    def _stream(self, op: Attempt) -> AsyncIterator[Reply | ClientError]:
        """Sends the request now and returns the async iterator over its replies."""
        sink = _LoopSink(asyncio.get_running_loop())
        serial = self._driver.next_serial()
        self._driver.submit(
            lambda m, c, now: m.request(op.request_id, serial, op.frames, op.intent_type, op.is_turn, sink, now, c),
            sink.close,
        )
        return self._replies(op.request_id, serial, sink)

    async def _replies(self, rid: str, serial: int, sink: _LoopSink) -> AsyncIterator[Reply | ClientError]:
        ended = False
        try:
            while True:
                item = await sink.items.get()
                if isinstance(item, _End):
                    ended = True
                    if item.error is not None:
                        yield item.error
                    return
                yield item
        finally:
            if not ended:
                self._driver.submit(lambda m, c, now: m.abandon(rid, serial, now, c), lambda e: None)

    async def _outcome(
        self, command: Callable[[_LoopSink], Callable[[machine.Machine, machine.Connection, float], None]]
    ) -> Outcome:
        sink = _LoopSink(asyncio.get_running_loop())
        self._driver.submit(command(sink), sink.close)
        item = await sink.items.get()
        if isinstance(item, _End):
            return item.error or ClientError("transport", "ended without an answer")
        return item

    async def _wait_one(
        self, command: Callable[[_LoopSink], Callable[[machine.Machine, machine.Connection, float], None]]
    ) -> Reply:
        outcome = await self._outcome(command)
        if isinstance(outcome, ClientError):
            raise outcome
        return outcome


