"""One trace from an HTTP caller to the handler, through the gateway (Docs/GATEWAY.md, Docs/TRACING.md): the
caller's `traceparent` header is the parent of the gateway's `POST /v1/requests` span, whose child is the broker's
`concierge.request`, then each `concierge.job` and its `concierge.handler`, all in the caller's trace, exported over
OTLP/HTTP to a real receiver (otlp_receiver.py); each conversation turn gets a span of its own the same way, named
after its route. With tracing off, the handler sees the caller's context unchanged."""

from __future__ import annotations

import pytest
import contextlib
import os
import secrets

import httpx

import cluster
from gateway_procs import Gateway, echo
from otlp_receiver import OTLPReceiver

pytestmark = pytest.mark.needs_trait("Tracing")


@contextlib.contextmanager
def environment(extra: dict[str, str]):
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


def start(run_dir, spawn, name: str, tracing: bool, env: dict[str, str]) -> Gateway:
    """A broker, a worker and a gateway, each with --tracing when `tracing`, exporting as `env` says."""
    flag = ["--tracing"] if tracing else []
    with environment(env):
        broker = cluster.Broker(f"{name}b", run_dir, {"startup-grace-ms": 100, **({"tracing": True} if tracing else {})})
        spawn.procs.append(broker.proc)
        broker.wait_ready()
        worker = cluster.Proc(f"{name}w", [str(cluster.binary()), "worker", "--broker", broker.backend, "--name",
                                           f"{name}w", "--log-level", "warning", *flag], run_dir)
        spawn.procs.append(worker)
        cluster.wait_for_workers(broker, {f"{name}w"}, procs=[worker])
        gateway = Gateway(name, run_dir, broker.frontend, *flag)
        spawn.procs.append(gateway.proc)
    return gateway.wait_ready()


def caller_context() -> tuple[str, str, str]:
    trace_id, span_id = secrets.token_hex(16), secrets.token_hex(8)
    return trace_id, span_id, f"00-{trace_id}-{span_id}-01"


def test_a_lifecycle_through_the_gateway_is_one_trace(run_dir, spawn):
    with OTLPReceiver() as receiver:
        gateway = start(run_dir, spawn, "gwot", tracing=True, env=receiver.env("concierge-gateway-test"))
        trace_id, caller_span, traceparent = caller_context()
        r = httpx.post(gateway.url + "/v1/requests", headers={"traceparent": traceparent}, json=echo("traced"),
                       timeout=30)
        assert r.status_code == 200, r.text

        def complete(spans) -> bool:
            names = [s.name for s in spans]
            return "POST /v1/requests" in names and "concierge.request" in names and names.count(
                "concierge.handler") >= 3

        spans = receiver.wait_for(complete, timeout=20, trace_id=trace_id)
    [entry] = [s for s in spans if s.name == "POST /v1/requests"]
    [request] = [s for s in spans if s.name == "concierge.request"]
    jobs = [s for s in spans if s.name == "concierge.job"]
    handlers = [s for s in spans if s.name == "concierge.handler"]
    assert entry.parent_span_id == caller_span and entry.kind == "server", entry
    assert entry.attributes.get("concierge.request_id") == r.headers["concierge-request-id"]
    assert entry.attributes.get("concierge.outcome") == "final"
    assert request.parent_span_id == entry.span_id, (request, entry)
    assert jobs and all(j.parent_span_id == request.span_id for j in jobs), jobs
    assert all(h.parent_span_id in {j.span_id for j in jobs} for h in handlers), handlers
    assert all(s.trace_id == trace_id for s in spans)


def test_each_conversation_turn_through_the_gateway_has_a_span(run_dir, spawn):
    """A turn is traced as a request is: `POST /v1/conversations` (turn 1) and `POST /v1/conversations/{id}/turns`
    (turn 2) are server spans whose parent is the caller's span, with the turn's request id, conversation id,
    intent type, number and outcome; the broker's `concierge.request` of each turn is its child."""
    with OTLPReceiver() as receiver:
        gateway = start(run_dir, spawn, "gwct", tracing=True, env=receiver.env("concierge-gateway-test"))
        trace_id, caller_span, traceparent = caller_context()
        headers = {"traceparent": traceparent}
        started = httpx.post(gateway.url + "/v1/conversations", params={"confirm": "true"}, headers=headers,
                             json=echo("turns"), timeout=30)
        assert started.status_code == 201, started.text
        cid = started.headers["conversation-id"]
        answered = httpx.post(gateway.url + f"/v1/conversations/{cid}/turns", headers=headers,
                              json={"confirm": True}, timeout=30)
        assert answered.status_code == 200, answered.text

        def complete(spans) -> bool:
            names = [s.name for s in spans]
            return ("POST /v1/conversations" in names and "POST /v1/conversations/{id}/turns" in names
                    and names.count("concierge.request") >= 2)

        spans = receiver.wait_for(complete, timeout=20, trace_id=trace_id)
    [first] = [s for s in spans if s.name == "POST /v1/conversations"]
    [second] = [s for s in spans if s.name == "POST /v1/conversations/{id}/turns"]
    requests = [s for s in spans if s.name == "concierge.request"]
    for entry, response, number in ((first, started, 1), (second, answered, 2)):
        assert entry.parent_span_id == caller_span and entry.kind == "server", entry
        assert entry.attributes.get("concierge.request_id") == response.headers["concierge-request-id"], entry
        assert entry.attributes.get("concierge.conversation_id") == cid, entry
        assert entry.attributes.get("concierge.intent_type") == "Echo", entry
        assert entry.attributes.get("concierge.turn") == number, entry
        assert entry.attributes.get("concierge.outcome") == "final", entry
        assert [r for r in requests if r.parent_span_id == entry.span_id], (entry, requests)
    assert all(s.trace_id == trace_id for s in spans)


def test_without_tracing_the_handler_sees_the_callers_context(run_dir, spawn):
    gateway = start(run_dir, spawn, "gwpt", tracing=False, env={})
    _, _, traceparent = caller_context()
    r = httpx.post(gateway.url + "/v1/requests", params={"phase": "handle"},
                   headers={"traceparent": traceparent, "tracestate": "vendor=1"}, json=echo("plain"), timeout=30)
    assert r.status_code == 200, r.text
    assert r.json()["handle"]["data"]["traceparent"] == traceparent
