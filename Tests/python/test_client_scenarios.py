"""The Python client library (Clients/python, concierge_client) against real brokers: the scenarios the Swift client
is tested with (Docs/PYTHON-CLIENT.md maps each to its Swift test), each run for `Client` and for `AsyncClient`.

The `api` fixture gives both front ends one calling convention: `api.call(client, "request", ...)` runs the method
(on a thread for `Client`, on an event loop thread for `AsyncClient`) and returns its result; `api.submit` returns a
concurrent Future, for a request kept in flight while the test acts. Every wait is bounded; ordering is by observable
state (a STATUS answer saying the request runs, a log line), never by sleeping."""

from __future__ import annotations

import asyncio
import concurrent.futures
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "Clients" / "python" / "src"))

import cluster  # noqa: E402
from concierge_client import (  # noqa: E402
    AsyncClient,
    Client,
    ClientError,
    CurveKeys,
    Reply,
    RetryPolicy,
    errors,
)

WAIT = 30.0  # the longest any single call may take before the test fails


def echo(text: str = "x", **parameters: Any) -> dict[str, Any]:
    return {"type": "Echo", "parameters": {"text": text, **parameters}}


class Api:
    """One calling convention over Client and AsyncClient."""

    def __init__(self, kind: str):
        self.kind = kind
        self.pool = concurrent.futures.ThreadPoolExecutor(80)  # a burst of concurrent calls needs a thread each
        self.loop: asyncio.AbstractEventLoop | None = None
        if kind == "async":
            self.loop = asyncio.new_event_loop()
            self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
            self.thread.start()
        self.clients: list[Any] = []

    def client(self, endpoints: Any, **kw: Any) -> Any:
        kw.setdefault("heartbeat", 0.25)
        c = (Client if self.kind == "sync" else AsyncClient)(endpoints, **kw)
        self.clients.append(c)
        return c

    def submit(self, client: Any, method: str, *args: Any, **kw: Any) -> concurrent.futures.Future[Any]:
        if self.loop is None:
            return self.pool.submit(getattr(client, method), *args, **kw)
        return asyncio.run_coroutine_threadsafe(getattr(client, method)(*args, **kw), self.loop)

    def call(self, client: Any, method: str, *args: Any, **kw: Any) -> Any:
        return self.submit(client, method, *args, **kw).result(WAIT)

    def stream(self, client: Any, *args: Any, **kw: Any) -> list[Reply]:
        """Every reply of `send(...)`, collected."""
        if self.loop is None:
            return self.pool.submit(lambda: list(client.send(*args, **kw))).result(WAIT)

        async def collect() -> list[Reply]:
            return [r async for r in client.send(*args, **kw)]

        return asyncio.run_coroutine_threadsafe(collect(), self.loop).result(WAIT)

    def close(self) -> None:
        for c in self.clients:
            if self.loop is None:
                c.close()
            else:
                asyncio.run_coroutine_threadsafe(c.close(), self.loop).result(WAIT)
        if self.loop is not None:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(5)
            self.loop.close()
        self.pool.shutdown(wait=False, cancel_futures=True)


@pytest.fixture(params=["sync", "async"])
def api(request):
    a = Api(request.param)
    yield a
    a.close()


def wait_until(what: str, predicate: Callable[[], bool], timeout: float = WAIT) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting until {what}")


def wait_running(api: Api, client: Any, request_id: str) -> Reply:
    """STATUS until the broker says the request runs on a worker (section 6.4)."""
    seen: list[Reply] = []

    def running() -> bool:
        answer = api.call(client, "status", request_id)
        seen.append(answer)
        return answer.status == "progress" and answer.json.get("state") == "running"

    wait_until(f"{request_id} runs (last STATUS: {seen[-1:]})", running)
    return seen[-1]


def ending_of(future: concurrent.futures.Future[Any]) -> Any:
    """A call's result, or the ClientError it raised."""
    try:
        return future.result(WAIT)
    except ClientError as e:
        return e


# -- the session cluster (one broker, a pool of two workers) --------------------------------------------------


def test_progress_then_final(api, main_cluster):
    """DeadlineAndFailureTests.expiredDeadlineRepliesInProgressThenFinal."""
    c = api.client(main_cluster.frontend)
    progress: list[Reply] = []
    final = api.call(c, "request", echo("slow", delayMs=600), "handle", deadline=0.2, on_progress=progress.append)
    assert [(r.status, r.phase) for r in progress] == [("progress", "handle")]
    assert progress[0].json["state"] == "running"
    assert (final.status, final.phase, final.attempts) == ("final", "handle", 1)
    assert final.json["handle"]["data"]["text"] == "slow"
    replies = api.stream(c, echo("streamed", delayMs=400), "handle", deadline=0.1)
    assert [r.status for r in replies] == ["progress", "final"]
    assert api.call(c, "status", replies[-1].request_id).body == replies[-1].body
    fast = api.stream(c, echo("fast"), "handle")
    assert [r.status for r in fast] == ["final"]  # DeadlineAndFailureTests.fastRequestsGetOnlyAFinalReply


def test_many_callers_share_one_client(api, spawn):
    """Client is thread-safe and AsyncClient takes concurrent tasks: 120 requests at once on one connection, each
    gets its own ending. Their queue stands on purpose (120 at once, 32 slots): a broker of its own with the
    standing-queue limit off, so that a busy machine gets none of them refused `busy` (issue 45)."""
    broker = spawn.broker(standing_queue_wait_ms=0)
    spawn.pool(broker, workers=2)
    c = api.client(broker.frontend)
    calls = [api.submit(c, "request", echo(f"n{i}"), "handle", deadline=10) for i in range(120)]
    replies = [call.result(WAIT) for call in calls]
    assert all(r.status == "final" for r in replies), [r.body for r in replies if r.status != "final"][:3]
    assert [r.json["handle"]["data"]["text"] for r in replies] == [f"n{i}" for i in range(120)]


def test_lifecycle_runs_every_phase(api, main_cluster):
    """ExampleLifecycleTests.aLifecycleAnswersTheSameWhateverItsPhasesChain; lifecycleStopsAtResolve..."""
    c = api.client(main_cluster.frontend)
    reply = api.call(c, "request", echo("life"))
    assert reply.status == "final" and reply.phase == "handle"
    assert set(reply.json) == {"intent", "resolve", "confirm", "handle"}
    stopped = api.call(c, "request", {"type": "SendPayment", "parameters": {"payee": {"displayName": "John"}}})
    assert stopped.status == "final" and stopped.phase == "resolve"
    assert stopped.json["resolve"]["currencyAmount"]["kind"] == "needsValue"
    unknown = api.call(c, "request", {"type": "NoSuchIntent", "parameters": {}}, "handle", deadline=0.5)
    assert unknown.error_code in ("unknown-intent", "busy")


def test_conversation_disambiguation_then_end(api, main_cluster):
    """ConversationProcessTests.aTwoTurnDisambiguationCompletesBySendingOnlyTheChosenOption and
    endingAConversationCancelsItAndAnotherClientCannotSeeIt."""
    c = api.client(main_cluster.frontend)
    intent = {"type": "SendMessage", "parameters": {"recipient": {"displayName": "John"}, "content": "Hi"}}
    first = api.call(c, "start_conversation", intent)
    assert first.number == 1 and first.state is not None and first.state.phase == "asking"
    [ask] = first.asking
    assert ask.kind == "disambiguation" and len(ask.options) >= 2
    last = api.call(c, "choose", first.conversation_id, ask.parameter, 0)
    assert last.number == 2 and last.is_ended and last.state.ending == "completed"
    assert last.interaction["handle"]["code"] == "success"
    # A refused answer changes nothing: its code, and the conversation as it was.
    second = api.call(c, "start_conversation", intent)
    with pytest.raises(ClientError) as refused:
        api.call(c, "answer", second.conversation_id, "noSuchParameter", "x")
    assert refused.value.code == errors.NOT_ASKED and refused.value.conversation.turn == 1
    ended = api.call(c, "end_conversation", second.conversation_id)
    assert ended.ending == "cancelled" and ended.turn == 1
    other = api.client(main_cluster.frontend)
    with pytest.raises(ClientError) as unknown:
        api.call(other, "conversation", second.conversation_id)
    assert unknown.value.code == errors.UNKNOWN_CONVERSATION


def test_idempotency_key_replays_and_conflicts(api, main_cluster):
    """IdempotencyTests.aRetryWithTheSameKeyIsAReplayAndAnotherIntentIsAConflict."""
    c = api.client(main_cluster.frontend)
    key = f"key-{api.kind}-{time.monotonic_ns()}"
    first = api.call(c, "request", echo("pay 5"), "handle", idempotency_key=key)
    again = api.call(c, "request", echo("pay 5"), "handle", idempotency_key=key)
    assert (first.is_replay, again.is_replay) == (False, True)
    assert again.body == first.body and again.request_id != first.request_id
    conflict = api.call(c, "request", echo("pay 6"), "handle", idempotency_key=key)
    assert conflict.error_code == "idempotency-conflict"
    # A retry policy does not retry a conflict.
    retried = api.call(c, "request", echo("pay 6"), "handle", idempotency_key=key, retry=RetryPolicy(max_attempts=3))
    assert retried.error_code == "idempotency-conflict" and retried.attempts == 1


def test_cancel_ends_the_request_and_its_caller_gets_it_too(api, main_cluster):
    """ClientRetryAndCancelTests.cancelReturnsTheCancelledEndingAndTheStreamGetsItToo."""
    c = api.client(main_cluster.frontend)
    rid = f"cancel-{api.kind}"
    pending = api.submit(c, "request", echo("long", delayMs=20000), "handle", deadline=30, request_id=rid)
    wait_running(api, c, rid)
    answer = api.call(c, "cancel", rid)
    assert answer.error_code == "cancelled"
    assert ending_of(pending).error_code == "cancelled"
    assert api.call(c, "status", rid).error_code == "cancelled"
    # A worker is free again: a new request is served at once.
    assert api.call(c, "request", echo("after"), "handle").status == "final"


def test_send_goes_out_before_its_replies_are_read(api, main_cluster):
    """send() sends at once, as the Swift client's: the request runs (and can be cancelled) before anyone iterates,
    and the iterator then gets its replies."""
    c = api.client(main_cluster.frontend)
    rid = f"eager-{api.kind}"

    def scenario_sync() -> list[Reply]:
        replies = c.send(echo("long", delayMs=20000), "handle", deadline=30, request_id=rid)
        wait_running(api, c, rid)
        assert c.cancel(rid).error_code == "cancelled"
        return list(replies)

    async def scenario_async() -> list[Reply]:
        replies = c.send(echo("long", delayMs=20000), "handle", deadline=30, request_id=rid)
        for _ in range(1500):
            answer = await c.status(rid)
            if answer.status == "progress" and answer.json.get("state") == "running":
                break
            await asyncio.sleep(0.02)
        assert (await c.cancel(rid)).error_code == "cancelled"
        return [r async for r in replies]

    if api.loop is None:
        replies = api.pool.submit(scenario_sync).result(WAIT)
    else:
        replies = asyncio.run_coroutine_threadsafe(scenario_async(), api.loop).result(WAIT)
    assert [r.error_code for r in replies] == ["cancelled"]


def test_abandoning_a_request_cancels_it_at_the_broker(api, main_cluster):
    """ClientRetryAndCancelTests.cancellingTheTaskOfARequestEndsItAtTheBroker: the caller stops waiting
    (AsyncClient: the task is cancelled; Client: its wait times out), and the broker stops the request."""
    c = api.client(main_cluster.frontend)
    rid = f"abandon-{api.kind}"
    if api.kind == "async":
        pending = api.submit(c, "request", echo("long", delayMs=20000), "handle", deadline=30, request_id=rid)
        wait_running(api, c, rid)
        pending.cancel()
    else:
        pending = api.submit(c, "request", echo("long", delayMs=20000), "handle", deadline=30, request_id=rid,
                             timeout=1.0)
        with pytest.raises(TimeoutError):
            pending.result(WAIT)
    wait_until("the broker stored the cancelled ending",
               lambda: api.call(c, "status", rid).error_code == "cancelled", timeout=10)


def test_bad_arguments_fail_before_sending(api, main_cluster):
    c = api.client(main_cluster.frontend)
    with pytest.raises(ClientError) as bad_trace:
        api.call(c, "request", echo(), traceparent="00-xyz")
    assert bad_trace.value.code == errors.BAD_TRACE_CONTEXT
    with pytest.raises(ClientError) as bad_id:
        api.call(c, "cancel", "x" * 256)
    assert bad_id.value.code == errors.BAD_REQUEST_ID
    with pytest.raises(ClientError) as bad_cid:
        api.call(c, "conversation", "has space")
    assert bad_cid.value.code == errors.BAD_CONVERSATION_ID


# -- brokers of their own -------------------------------------------------------------------------------------


def test_retry_policy_retries_worker_lost_with_the_same_key(api, spawn):
    """ClientRetryAndCancelTests.aRetryPolicyRetriesWorkerLostWithTheSameKeyAndEndsWithTheFinal."""
    broker = spawn.broker(heartbeat_ms=250)
    doomed = spawn.worker(broker, name=f"doomed-{api.kind}", capacity=1, heartbeat_ms=250)
    c = api.client(broker.frontend)
    policy = RetryPolicy(max_attempts=4, initial_backoff=0.05, max_backoff=0.5)
    pending = api.submit(c, "request", echo("pay 7", delayMs=1500), "handle", deadline=30, request_id="first",
                         retry=policy)
    wait_running(api, c, "first")
    doomed.signal(9)
    wait_until("attempt 1 ended worker-lost", lambda: api.call(c, "status", "first").error_code == "worker-lost")
    spawn.worker(broker, name=f"spare-{api.kind}", capacity=1, heartbeat_ms=250, wait=False)
    reply = pending.result(WAIT)
    assert reply.status == "final" and reply.attempts == 2 and reply.request_id != "first"
    data = reply.json["handle"]["data"]
    assert data["worker"] == f"spare-{api.kind}" and data["attempt"] == 2 and data["idempotencyKey"]


def test_pushback_is_heeded_unless_told_not_to(api, spawn):
    """ThrottleTests.aClientHeedsThePushbackOfABusyRefusalByDefault."""
    broker = spawn.broker()
    spawn.worker(broker, name=f"single-{api.kind}", capacity=1)
    for heeds in (True, False):
        c = api.client(broker.frontend, heed_pushback=heeds)
        for i in range(8):  # teach the broker the pace of one 100 ms job at a time
            assert api.call(c, "request", echo(f"pace {i}", delayMs=100), "handle").status == "final"
        burst = [api.submit(c, "request", echo(f"burst {i}", delayMs=100), "handle", deadline=1.0)
                 for i in range(40)]
        # The last ones are refused at arrival with a pushback of about 11 requests/s for this client (Client sends
        # the burst from threads, so a refusal may already be heeded for the burst's last requests).
        refusal = next(r for r in map(ending_of, concurrent.futures.as_completed(burst, WAIT))
                       if isinstance(r, Reply) and r.error_code == "busy")
        assert refusal.json.get("pushback_rate", 0) > 0, refusal.body
        # At once, 20 more: with the pushback in force (1 s), at most a few tokens' worth go out.
        following = [ending_of(api.submit(c, "request", echo(f"next {i}", delayMs=1), "handle", deadline=1.0))
                     for i in range(20)]
        throttled = [e for e in following if isinstance(e, ClientError)]
        if heeds:
            assert len(throttled) >= 10, following
            assert all(e.code == errors.THROTTLED and "pushback" in e.message for e in throttled)
        else:
            assert throttled == [] and not any(isinstance(ending_of(f), ClientError) for f in burst)
        for f in burst:
            ending_of(f)


def test_broker_restart_ends_a_lost_request_with_broker_restarted(api, spawn, run_dir):
    """BrokerRestartTests.aRequestTheNewBrokerDoesNotKnowEndsWithBrokerRestartedAndOneItKnowsGoesOn: after the
    restart the client sweeps (STATUS about every request in flight)."""
    name = f"restart-{api.kind}"
    broker = cluster.Broker(name, run_dir, {"heartbeat-ms": 250})
    spawn.procs.append(broker.proc)
    broker.wait_ready()
    spawn.worker(broker, name=f"w-{api.kind}", heartbeat_ms=250)
    c = api.client(broker.frontend, heartbeat=5.0)  # silence alone would take 15 s: the sweep must do it
    api.call(c, "ping")
    lost = api.submit(c, "request", echo("lost", delayMs=60000), "handle", deadline=0.1, request_id="lost")
    wait_running(api, c, "lost")
    broker.proc.signal(9)
    broker.proc.wait(10)
    sweeps = c.sweeps
    queued = api.submit(c, "request", echo("queued", delayMs=300), "handle", deadline=30, request_id="queued")
    again = cluster.Broker(name, run_dir, {"heartbeat-ms": 250, "startup-grace-ms": 30000})
    spawn.procs.append(again.proc)
    restarted = time.monotonic()
    error = ending_of(lost)
    assert isinstance(error, ClientError) and error.code == errors.BROKER_RESTARTED, error
    assert "no longer knows" in error.message and time.monotonic() - restarted < 10
    assert c.sweeps > sweeps
    final = queued.result(WAIT)
    assert final.status == "final" and final.json["handle"]["data"]["text"] == "queued"
    assert api.call(c, "status", "lost").error_code == "unknown-request"


def test_a_conversation_survives_a_broker_killed_between_its_turns(api, spawn, run_dir):
    """ConversationTests.aConversationSurvivesABrokerKilledBetweenItsTurns: a journaled broker killed between turns;
    the client, still connected to the endpoint, sends only the answers to the broker started again."""
    journal = run_dir / f"conv-journal-{api.kind}.sqlite"
    out = subprocess.run([str(cluster.binary()), "journal", "init", str(journal)], capture_output=True, timeout=30)
    assert out.returncode == 0, out.stderr
    name, flags = f"conv-{api.kind}", {"heartbeat-ms": 250, "journal": journal}
    broker = cluster.Broker(name, run_dir, dict(flags))
    spawn.procs.append(broker.proc)
    broker.wait_ready()
    w1 = spawn.worker(broker, name=f"cw1-{api.kind}", capacity=4, heartbeat_ms=250)
    c = api.client(broker.frontend)
    john = {"type": "SendMessage", "parameters": {"recipient": {"displayName": "John"}, "content": "Running late"}}
    first = api.call(c, "start_conversation", john, f"order-{api.kind}", confirm=True)
    assert first.asking[0].parameter == "recipient" and len(first.asking[0].options) == 2
    broker.proc.signal(9)
    broker.proc.wait(10)
    w1.signal(9)
    w1.wait(10)
    again = cluster.Broker(name, run_dir, dict(flags))
    spawn.procs.append(again.proc)
    again.wait_ready()
    spawn.worker(again, name=f"cw2-{api.kind}", capacity=4, heartbeat_ms=250)
    second = api.call(c, "choose", first.conversation_id, "recipient", 1)
    assert second.is_confirming and second.number == 2
    assert second.interaction["intent"]["parameters"]["recipient"]["displayName"] == "John Doe"
    last = api.call(c, "confirm", first.conversation_id, True)
    assert last.reply.phase == "handle" and last.interaction["handle"]["code"] == "success"
    assert last.state.ending == "completed" and last.number == 3


def test_failover_follows_the_active_broker(api, spawn, run_dir):
    """FollowTheActiveBrokerTests.aRequestInFlightFollowsTheActiveBrokerToTheOneThatTakesOver: two brokers on one
    SQLite journal, the first killed with a request in flight, the second started: the request ends there."""
    journal = run_dir / f"journal-{api.kind}.sqlite"
    out = subprocess.run([str(cluster.binary()), "journal", "init", str(journal)], capture_output=True, timeout=30)
    assert out.returncode == 0, out.stderr
    flags = {"heartbeat-ms": 250, "journal": journal, "hard-limit-ms": 60000}
    a = cluster.Broker(f"fa-{api.kind}", run_dir, dict(flags))
    spawn.procs.append(a.proc)
    a.wait_ready()
    b_frontend, b_backend = f"ipc://{run_dir}/fb-{api.kind}-fe.sock", f"ipc://{run_dir}/fb-{api.kind}-be.sock"
    worker = cluster.start_worker(f"{a.backend},{b_backend}", run_dir, f"fw-{api.kind}", capacity=4, heartbeat_ms=250)
    spawn.procs.append(worker)
    c = api.client([a.frontend, b_frontend])
    wait_until("the worker serves", lambda: api.call(c, "request", echo("probe"), "handle").status == "final")
    slow = api.submit(c, "request", echo("slow", delayMs=2000, delayPhase="resolve"), "resolve", deadline=30,
                      request_id="slow")
    wait_running(api, c, "slow")
    a.proc.signal(9)
    a.proc.wait(10)
    b = cluster.Broker(f"fb-{api.kind}", run_dir, dict(flags))
    spawn.procs.append(b.proc)
    assert b.frontend == b_frontend
    ending = slow.result(WAIT)
    assert ending.status == "final" and ending.json["resolve"]["text"]["value"] == "slow", ending.body
    assert api.call(c, "request", echo("after"), "handle").status == "final"


def test_a_first_endpoint_never_bound_is_left_within_a_heartbeat(api, main_cluster, run_dir):
    """FollowTheActiveBrokerTests.aClientAndAPoolWhoseFirstEndpointIsNeverBoundWorkThroughTheSecond: no handshake
    within one heartbeat interval moves the client on (silence alone would take liveness x heartbeat = 10 s)."""
    c = api.client([f"ipc://{run_dir}/never-bound-{api.kind}.sock", main_cluster.frontend], heartbeat=0.25,
                   heartbeat_liveness=40)
    reply = api.call(c, "request", echo("second"), "handle", timeout=5)
    assert reply.status == "final" and reply.json["handle"]["data"]["text"] == "second"


def test_curve_with_keys_from_keygen(api, spawn, run_dir):
    """CurveSecurityTests.listedClientGetsRepliesFromAListedPoolOverCurve and
    aClientWithoutCurveCannotTalkToACurveBroker."""
    keys = run_dir / f"keys-{api.kind}"
    keys.mkdir()
    for name in ("broker", "client", "worker", "rogue"):
        out = subprocess.run([str(cluster.binary()), "keygen", "--out", str(keys / name)], capture_output=True,
                             timeout=30)
        assert out.returncode == 0, out.stderr
    (keys / "clients.txt").write_text((keys / "client.pub").read_text())
    (keys / "workers.txt").write_text((keys / "worker.pub").read_text())
    broker = spawn.broker(wait=False, curve_secret_key=keys / "broker.secret", client_keys=keys / "clients.txt",
                          worker_keys=keys / "workers.txt")
    worker = cluster.Proc(f"cw-{api.kind}", [
        str(cluster.binary()), "worker", "--broker", broker.backend, "--name", f"cw-{api.kind}",
        "--curve-server-key", str(keys / "broker.pub"), "--curve-secret-key", str(keys / "worker.secret"),
        "--log-level", "warning"], run_dir)
    spawn.procs.append(worker)
    c = api.client(broker.frontend, curve=CurveKeys.from_files(str(keys / "broker.pub"), str(keys / "client.secret")))
    wait_until("served over CURVE", lambda: api.call(c, "request", echo("over curve"), "handle").status == "final")
    reply = api.call(c, "request", echo("over curve"), "handle")
    assert reply.json["handle"]["data"]["text"] == "over curve"
    rogue = api.client(broker.frontend, curve=CurveKeys.from_files(str(keys / "broker.pub"),
                                                                   str(keys / "rogue.secret")))
    with pytest.raises(ClientError) as refused:
        api.call(rogue, "request", echo("rogue"), "handle")
    assert refused.value.code == errors.HANDSHAKE_FAILED
    # A client without CURVE: libzmq reports the mechanism mismatch on whichever side sees it first, so the client
    # either hears it (handshake-failed) or only sees its handshakes break off and gives up after its reconnect
    # timeout, saying why (as CurveSecurityTests.isHandshakeFailure accepts for the Swift client).
    plain = api.client(broker.frontend, reconnect_timeout=2.0)
    with pytest.raises(ClientError) as mismatch:
        api.call(plain, "request", echo("plain"), "handle")
    assert mismatch.value.code == errors.HANDSHAKE_FAILED or (
        mismatch.value.code == errors.CONNECTION_LOST and "the last handshake failed" in str(mismatch.value)
    ), mismatch.value


# -- trace context (CIPC04) -----------------------------------------------------------------------------------


def test_a_traced_request_to_a_real_broker_ends(api, main_cluster):
    """A REQUEST with trace context (CIPC04) gets its final from a real broker, and the worker's handler saw the
    caller's traceparent (the broker passes it through in JOB F10 when it does not trace; Echo answers it)."""
    c = api.client(main_cluster.frontend)
    parent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
    reply = api.call(c, "request", echo("traced"), "handle", traceparent=parent, tracestate="vendor=1", timeout=10)
    assert reply.status == "final" and reply.json["handle"]["data"]["text"] == "traced"
    assert reply.json["handle"]["data"]["traceparent"] == parent
    plain = api.call(c, "request", echo("plain"), "handle")
    assert plain.status == "final" and "traceparent" not in plain.json["handle"]["data"]


def test_trace_context_goes_out_as_cipc04(api, run_dir):
    """A REQUEST and a TURN with a traceparent are CIPC04 with F8/F9; without one, the versions of the Swift
    client (01 plain, 02 keyed, 03 turns). A Python ROUTER plays the broker and records the frames."""
    import zmq

    endpoint = f"ipc://{run_dir}/trace-{api.kind}.sock"
    router = zmq.Context.instance().socket(zmq.ROUTER)
    router.setsockopt(zmq.LINGER, 0)
    router.bind(endpoint)
    try:
        c = api.client(endpoint)
        parent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"

        def answered(method: str, *args: Any, **kw: Any) -> list[bytes]:
            pending = api.submit(c, method, *args, **kw)
            assert router.poll(int(WAIT * 1000)), "nothing sent"
            frames = router.recv_multipart()
            rid = frames[3]
            router.send_multipart([frames[0], frames[1], b"REPLY", rid, b"error", b"",
                                   b'{"code":"bad-body","message":"recorded"}'] + ([b""] if frames[1] != b"CIPC01"
                                                                                     else []))
            ending_of(pending)
            return frames[1:]

        traced = answered("request", echo(), "handle", traceparent=parent, tracestate="k=v", retry=None)
        assert traced[0] == b"CIPC04" and len(traced) == 10 and traced[8:] == [parent.encode(), b"k=v"]
        assert traced[7] == b""  # no key
        keyed = answered("request", echo(), "handle", idempotency_key="k1", traceparent=parent)
        assert keyed[7] == b"k1" and keyed[8:] == [parent.encode(), b""]
        assert answered("request", echo(), "handle")[0] == b"CIPC01"
        assert answered("request", echo(), "handle", idempotency_key="k2")[0] == b"CIPC02"
        turn = answered("start_conversation", echo(), traceparent=parent, retry=None)
        assert turn[:2] == [b"CIPC04", b"TURN"] and len(turn) == 10 and turn[4] == b"1" and turn[8] == parent.encode()
    finally:
        router.close(0)
