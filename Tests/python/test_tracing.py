"""One trace from caller to handler (Docs/TRACING.md, PROTOCOL.md 4.2 and 5.7): a `CIPC04` REQUEST carries the
caller's W3C trace context through a real broker to a real worker.

* With `--tracing` on the broker and the worker, both export spans over OTLP/HTTP to a real receiver built from the
  OpenTelemetry protocol definitions (otlp_receiver.py), and the spans form the tree
  caller span -> concierge.request -> concierge.job -> concierge.handler (one per phase), all in the caller's trace.
* With tracing off (the default), the worker still gets the caller's trace context unchanged (pass-through): the
  Echo example handler answers the `traceparent` its HandlerContext holds.
* A malformed trace context is refused with `bad-trace-context`, in the message's version.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import time
import uuid
from pathlib import Path
from typing import Iterator

import pytest
import zmq

import cluster
from otlp_receiver import OTLPReceiver, Span

pytestmark = pytest.mark.needs_trait("Tracing")

CIPC04 = b"CIPC04"


@contextlib.contextmanager
def environment(extra: dict[str, str]) -> Iterator[None]:
    """`extra` in the environment of the processes started inside (cluster.Proc inherits this process's)."""
    saved = {key: os.environ.get(key) for key in extra}
    os.environ.update(extra)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def start_broker(run_dir: Path, name: str, tracing: bool, env: dict[str, str],
                 flags: dict[str, object] | None = None) -> cluster.Broker:
    with environment(env):
        broker = cluster.Broker(name, run_dir, ({"tracing": True} if tracing else {}) | (flags or {}))
    broker.wait_ready()
    return broker


def start_worker(broker: cluster.Broker, run_dir: Path, name: str, tracing: bool, env: dict[str, str]) -> cluster.Proc:
    args = [str(cluster.binary()), "worker", "--broker", broker.backend, "--name", name, "--capacity", "1",
            "--heartbeat-ms", str(broker.heartbeat_ms), "--log-level", "warning"]
    if tracing:
        args.append("--tracing")
    with environment(env):
        return cluster.Proc(name, args, run_dir)


class Caller:
    """A DEALER speaking CIPC04 (PROTOCOL.md 4.2): REQUESTs with a trace context, and their replies."""

    def __init__(self, endpoint: str):
        self.context = zmq.Context()
        self.socket = self.context.socket(zmq.DEALER)
        self.socket.setsockopt(zmq.LINGER, 0)
        self.socket.connect(endpoint)

    def request(self, intent: dict, phase: str, traceparent: str, tracestate: str = "", key: str = "",
                deadline_ms: int = 5000) -> str:
        request_id = "r-" + uuid.uuid4().hex[:12]
        body = json.dumps({"intent": intent}).encode()
        self.socket.send_multipart([CIPC04, b"REQUEST", request_id.encode(), intent["type"].encode(), phase.encode(),
                                    str(deadline_ms).encode(), body, key.encode(), traceparent.encode(),
                                    tracestate.encode()])
        return request_id

    def ending(self, request_id: str, timeout: float = 15.0) -> list[bytes]:
        """The final or error REPLY of `request_id` (progress skipped); bounded by `timeout`."""
        end = time.monotonic() + timeout
        while (left := end - time.monotonic()) > 0:
            if not self.socket.poll(int(left * 1000)):
                break
            frames = self.socket.recv_multipart()
            assert frames[0] == CIPC04, f"a CIPC04 message is answered in CIPC04 (4.8): {frames[:5]}"
            assert len(frames) == 7, f"a CIPC04 REPLY has the 7 frames of CIPC02/03: {frames}"
            if frames[1] == b"REPLY" and frames[2] == request_id.encode() and frames[3] in (b"final", b"error"):
                return frames
        raise AssertionError(f"no ending for {request_id} within {timeout} s")

    def close(self) -> None:
        self.socket.close(0)
        self.context.term()


def caller_context() -> tuple[str, str, str]:
    """A caller's trace id, span id and traceparent (sampled)."""
    trace_id = secrets.token_hex(16)
    span_id = secrets.token_hex(8)
    return trace_id, span_id, f"00-{trace_id}-{span_id}-01"


def traceparents_in(value: object) -> list[str]:
    """Every `"traceparent"` string in a JSON value (the Echo handler's answer data, wherever the phase puts it)."""
    found: list[str] = []
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "traceparent" and isinstance(item, str):
                found.append(item)
            else:
                found += traceparents_in(item)
    elif isinstance(value, list):
        for item in value:
            found += traceparents_in(item)
    return found


@pytest.fixture
def receiver():
    with OTLPReceiver() as r:
        yield r


@pytest.fixture
def stack(run_dir):
    """Starts brokers and workers for one test and stops them all at its end (by pid)."""
    procs: list = []
    callers: list[Caller] = []

    class Stack:
        counter = 0

        def __init__(self) -> None:
            self.broker: cluster.Broker | None = None
            self.workers: dict[str, cluster.Proc] = {}

        def up(self, tracing: bool, env: dict[str, str], flags: dict[str, object] | None = None) -> Caller:
            Stack.counter += 1
            name = f"trace{Stack.counter}-{os.getpid()}"
            self.broker = start_broker(run_dir, name, tracing, env, flags)
            procs.append(self.broker)
            self.add_worker(name + "-w", tracing, env)
            caller = Caller(self.broker.frontend)
            callers.append(caller)
            return caller

        def add_worker(self, name: str, tracing: bool, env: dict[str, str]) -> cluster.Proc:
            """Starts a worker of capacity 1 and waits until it answers (an idle worker is what Echo lands on)."""
            assert self.broker is not None
            proc = start_worker(self.broker, run_dir, name, tracing, env)
            procs.append(proc)
            self.workers[name] = proc
            cluster.wait_for_workers(self.broker, {name}, procs=[proc])
            return proc

    yield Stack()
    for caller in callers:
        caller.close()
    for proc in reversed(procs):
        proc.stop()


def test_a_traced_lifecycle_is_one_trace_from_the_caller_to_each_handler(stack, receiver):
    caller = stack.up(tracing=True, env=receiver.env("concierge-test"))
    trace_id, caller_span, traceparent = caller_context()
    request_id = caller.request({"type": "Echo", "parameters": {"text": "traced"}}, "lifecycle", traceparent,
                                tracestate="vendor=opaque")
    ending = caller.ending(request_id)
    assert ending[3] == b"final", ending

    def complete(spans: list[Span]) -> bool:
        names = [s.name for s in spans]
        return "concierge.request" in names and names.count("concierge.handler") >= 3

    spans = receiver.wait_for(complete, timeout=20, trace_id=trace_id)
    requests = [s for s in spans if s.name == "concierge.request"]
    jobs = [s for s in spans if s.name == "concierge.job"]
    handlers = [s for s in spans if s.name == "concierge.handler"]
    assert len(requests) == 1, spans
    request = requests[0]
    # The broker's request span is the caller's child, in the caller's trace.
    assert request.parent_span_id == caller_span, request
    assert request.kind == "server"
    assert request.attributes.get("concierge.request_id") == request_id
    assert request.attributes.get("concierge.intent_type") == "Echo"
    assert request.attributes.get("concierge.outcome") == "final"
    # Each job is the request's child; each handler span a job's child, one per phase of the lifecycle.
    assert jobs and all(j.parent_span_id == request.span_id and j.kind == "client" for j in jobs), jobs
    job_ids = {j.span_id for j in jobs}
    assert all(h.parent_span_id in job_ids and h.kind == "server" for h in handlers), handlers
    assert sorted(h.attributes.get("concierge.phase") for h in handlers) == ["confirm", "handle", "resolve"]
    assert all(s.trace_id == trace_id for s in spans)
    # The handler saw its own span's context (HandlerContext.traceContext), with the caller's tracestate... as a
    # traceparent whose parent id is the handle phase's span.
    handle_span = next(h for h in handlers if h.attributes.get("concierge.phase") == "handle")
    seen = traceparents_in(json.loads(ending[5]))
    assert f"00-{trace_id}-{handle_span.span_id}-01" in seen, (seen, handle_span)


def test_a_job_sent_again_after_a_lost_worker_links_to_the_lost_jobs_span(stack, receiver):
    """PROTOCOL.md 6.7: a resolve job whose worker was lost is sent again; its concierge.job span links to the lost
    one's (Docs/TRACING.md), and counts as attempt 2."""
    env = receiver.env("concierge-test")
    caller = stack.up(tracing=True, env=env, flags={"heartbeat-ms": 200})
    trace_id, _, traceparent = caller_context()
    slow = {"type": "Echo", "parameters": {"text": "slow", "delayPhase": "resolve", "delayMs": 1500}}
    request_id = caller.request(slow, "resolve", traceparent, deadline_ms=20000)
    # The first worker holds the job (capacity 1); a second one joins, then the first is killed mid-job.
    first = next(iter(stack.workers.values()))
    stack.add_worker(f"trace-relief-{os.getpid()}", True, env)
    first.kill_group()
    ending = caller.ending(request_id, timeout=20)
    assert ending[3] == b"final", ending

    def both_jobs(spans: list[Span]) -> bool:
        return len([s for s in spans if s.name == "concierge.job"]) >= 2 and any(
            s.name == "concierge.request" for s in spans)

    spans = receiver.wait_for(both_jobs, timeout=20, trace_id=trace_id)
    jobs = sorted((s for s in spans if s.name == "concierge.job"), key=lambda s: s.start_ns)
    lost, again = jobs[0], jobs[1]
    assert lost.attributes.get("concierge.outcome") == "worker-lost", lost
    assert again.attributes.get("concierge.attempt") == 2, again
    assert [(t, s) for t, s, _ in again.links] == [(trace_id, lost.span_id)], again.links
    request = next(s for s in spans if s.name == "concierge.request")
    assert lost.parent_span_id == request.span_id and again.parent_span_id == request.span_id


def test_with_tracing_off_the_worker_gets_the_callers_trace_context_unchanged(stack):
    caller = stack.up(tracing=False, env={})
    trace_id, caller_span, traceparent = caller_context()
    request_id = caller.request({"type": "Echo", "parameters": {"text": "passed"}}, "handle", traceparent,
                                tracestate="vendor=opaque")
    ending = caller.ending(request_id)
    assert ending[3] == b"final", ending
    # The handle data, and its copy in the default user activity.
    assert set(traceparents_in(json.loads(ending[5]))) == {traceparent}


def test_a_malformed_trace_context_is_refused_with_bad_trace_context(stack):
    caller = stack.up(tracing=False, env={})
    _, _, traceparent = caller_context()
    for bad_parent, bad_state in [("00-zz", ""), ("", "vendor=x"), (traceparent.upper(), ""),
                                  (traceparent, "tab\there")]:
        request_id = caller.request({"type": "Echo", "parameters": {}}, "handle", bad_parent, bad_state)
        ending = caller.ending(request_id)
        assert ending[3] == b"error", ending
        assert json.loads(ending[5])["code"] == "bad-trace-context", ending
