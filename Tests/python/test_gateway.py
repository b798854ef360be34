"""The HTTP gateway (`concierge gateway`, Docs/GATEWAY.md) against real broker, pool and gateway processes, with a
real HTTP client (httpx, httpx-sse): answers, long polls, cancel, server-sent events, keys, load, bad input, drain,
tokens, TLS, conversations, and many idle streams."""

from __future__ import annotations

import concurrent.futures
import json
import shutil
import signal
import socket
import ssl
import subprocess
import threading
import time

import httpx
import pytest
from httpx_sse import connect_sse

import cluster
from gateway_procs import Gateway, echo, stack

SSE = {"Accept": "text/event-stream"}


@pytest.fixture(scope="module")
def gw(run_dir):
    """One broker, a pool of two example workers, and a gateway in front."""
    with stack(run_dir, "gw") as gateway:
        yield gateway


@pytest.fixture
def http(gw):
    with httpx.Client(base_url=gw.url, timeout=30) as client:
        yield client


def problem(response: httpx.Response, status: int, code: str) -> dict:
    """The response is the problem document of `code` with `status`."""
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/problem+json"
    body = response.json()
    assert body["code"] == code and body["status"] == status, body
    assert {"type", "title", "detail"} <= body.keys()
    return body


def test_final_reply_within_the_deadline(http):
    r = http.post("/v1/requests", json=echo("sync"))
    assert r.status_code == 200, r.text
    assert r.json()["handle"]["code"] == "success" and r.json()["handle"]["data"]["text"] == "sync"
    assert r.headers["concierge-request-id"]
    assert "idempotent-replayed" not in r.headers


def test_accepted_then_long_poll_for_the_ending(http):
    r = http.post("/v1/requests", params={"deadline_ms": 50}, json=echo("slow", delayMs=700))
    assert r.status_code == 202, r.text
    assert r.json()["state"] in ("queued", "running")
    location = r.headers["location"]
    assert location == f"/v1/requests/{r.headers['concierge-request-id']}"
    now = http.get(location)  # wait=0: at once, still running
    assert now.status_code == 202 and now.json()["phase"] == "handle"
    done = http.get(location, params={"wait": 10})
    assert done.status_code == 200, done.text
    assert done.json()["handle"]["data"]["text"] == "slow"


def test_delete_cancels_a_running_request(http):
    r = http.post("/v1/requests", headers={"Concierge-Deadline": "30"}, json=echo(delayMs=30000))
    assert r.status_code == 202
    cancelled = http.delete(r.headers["location"])
    body = problem(cancelled, 409, "cancelled")
    assert body["requestId"] == r.headers["concierge-request-id"]
    problem(http.get(r.headers["location"]), 409, "cancelled")


def test_event_stream_sends_progress_then_final(http):
    with connect_sse(http, "POST", "/v1/requests", params={"deadline_ms": 50},
                     json=echo("streamed", delayMs=400)) as source:
        assert source.response.headers["content-type"] == "text/event-stream"
        rid = source.response.headers["concierge-request-id"]
        events = [(e.event, e.id, e.data) for e in source.iter_sse()]
    assert [name for name, _, _ in events] == ["progress", "final"]
    assert all(ident == rid for _, ident, _ in events)
    assert json.loads(events[0][2])["state"] == "running"
    assert json.loads(events[1][2])["handle"]["data"]["text"] == "streamed"


def test_event_stream_of_an_error_ends_with_an_error_event(http):
    with connect_sse(http, "POST", "/v1/requests", json={"intent": {"type": "NoSuchIntent"}}) as source:
        events = [(e.event, json.loads(e.data)) for e in source.iter_sse()]
    assert [name for name, _ in events] == ["error"]
    assert events[0][1]["code"] == "unknown-intent" and events[0][1]["status"] == 404


def test_idempotency_key_replays_and_says_so(http):
    key = {"Idempotency-Key": f"gw-key-{time.monotonic_ns()}"}
    first = http.post("/v1/requests", headers=key, json=echo("once"))
    assert first.status_code == 200 and "idempotent-replayed" not in first.headers
    again = http.post("/v1/requests", headers=key, json=echo("once"))
    assert again.status_code == 200 and again.headers["idempotent-replayed"] == "true"
    assert again.json()["handle"]["data"]["instance"] == first.json()["handle"]["data"]["instance"]
    # The same JSON written otherwise (key order, spacing) is the same request: replayed, not a conflict.
    other_form = json.dumps({"intent": {"parameters": {"text": "once"}, "type": "Echo"}}, indent=2)
    again = http.post("/v1/requests", headers={**key, "Content-Type": "application/json"}, content=other_form)
    assert again.status_code == 200 and again.headers["idempotent-replayed"] == "true", again.text
    problem(http.post("/v1/requests", headers=key, json=echo("other")), 422, "idempotency-conflict")


def test_unknown_intent_is_a_404_problem(http):
    body = problem(http.post("/v1/requests", json={"intent": {"type": "NoSuchIntent"}}), 404, "unknown-intent")
    assert body["requestId"]


def test_bad_input_gets_its_documented_status(http, gw):
    cases = [
        (dict(content=b"{not json", headers={"Content-Type": "application/json"}), 400, "bad-json"),
        (dict(content=b"{}", headers={"Content-Type": "text/plain"}), 415, "unsupported-media-type"),
        (dict(content=b"{}"), 415, "unsupported-media-type"),
        (dict(json=[1, 2]), 422, "bad-interaction"),
        (dict(json={"intent": {"parameters": {}}}), 422, "bad-interaction"),
        (dict(json={"intent": {"type": "Echo", "parameters": []}}), 422, "bad-interaction"),
        (dict(json=echo(), params={"phase": "everything"}), 400, "bad-phase"),
        (dict(json=echo(), params={"deadline_ms": 5}), 400, "bad-deadline"),
        (dict(json=echo(), headers={"Concierge-Deadline": "soon"}), 400, "bad-deadline"),
        (dict(json=echo(), headers={"Idempotency-Key": "k" * 256}), 400, "bad-idempotency-key"),
        (dict(content=b'{"intent": {"type": "Echo", "parameters": {"text": "' + b"x" * (1 << 20) + b'"}}}',
              headers={"Content-Type": "application/json"}), 413, "body-too-large"),
        (dict(json=echo(count=1)), 422, "unknown-parameter"),
        (dict(json=echo(delayMs="soon")), 422, "invalid-type"),
    ]
    for kwargs, status, code in cases:
        problem(http.post("/v1/requests", **kwargs), status, code)
    problem(http.get("/v1/requests/x", params={"wait": 31}), 400, "bad-wait")
    problem(http.get("/v1/requests/never-sent"), 404, "unknown-request")
    problem(http.get("/v2/nothing"), 404, "not-found")
    wrong = http.put("/v1/requests")
    problem(wrong, 405, "method-not-allowed")
    assert wrong.headers["allow"] == "POST"
    # A traceparent that is not W3C's is ignored (a new trace), not refused.
    assert http.post("/v1/requests", headers={"traceparent": "nonsense"}, json=echo()).status_code == 200
    # Nothing else was lost: the gateway still answers.
    assert http.post("/v1/requests", json=echo("after")).json()["handle"]["data"]["text"] == "after"
    assert gw.proc.alive()


def test_a_reader_that_disconnects_mid_stream_loses_nothing_else(http, gw):
    with httpx.Client(base_url=gw.url, timeout=30) as other:
        with connect_sse(other, "POST", "/v1/requests", params={"deadline_ms": 30},
                         json=echo("kept", delayMs=800)) as kept:
            events = kept.iter_sse()
            assert next(events).event == "progress"
            with httpx.Client(base_url=gw.url, timeout=30) as leaving:
                with connect_sse(leaving, "POST", "/v1/requests", params={"deadline_ms": 30},
                                 json=echo("abandoned", delayMs=600)) as gone:
                    gone_id = gone.response.headers["concierge-request-id"]
                    assert next(gone.iter_sse()).event == "progress"
                # The connection is closed here, mid-stream.
            assert [e.event for e in events] == ["final"]
    # The abandoned request went on, and its ending is still there.
    ending = http.get(f"/v1/requests/{gone_id}", params={"wait": 10})
    assert ending.status_code == 200 and ending.json()["handle"]["data"]["text"] == "abandoned"
    assert gw.proc.alive()


def test_busy_is_429_with_retry_after(run_dir, spawn):
    broker = spawn.broker(max_queued=1)
    spawn.worker(broker, capacity=1)
    gateway = Gateway("gwbusy", run_dir, broker.frontend)
    spawn.procs.append(gateway.proc)
    gateway.wait_ready()
    with httpx.Client(base_url=gateway.url, timeout=30) as http:
        # One request runs on the worker's one slot; the next fill the queue of one, until one is refused.
        held, refused = [], None
        for _ in range(5):
            r = http.post("/v1/requests", params={"phase": "handle", "deadline_ms": 20}, json=echo(delayMs=20000))
            if r.status_code != 202:
                refused = r
                break
            held.append(r)
        assert held and refused is not None
        problem(refused, 429, "busy")
        assert int(refused.headers["retry-after"]) >= 1
        for r in held:
            http.delete(r.headers["location"])


def test_sigterm_drains_open_streams(run_dir, spawn, gw):
    gateway = Gateway("gwdrain", run_dir, gw.frontend, "--drain-timeout-ms", "1500")
    spawn.procs.append(gateway.proc)
    gateway.wait_ready()
    results: dict[str, list] = {}
    progressed = threading.Barrier(3, timeout=20)

    def stream(name: str, delay: int) -> None:
        with httpx.Client(base_url=gateway.url, timeout=30) as http:
            with connect_sse(http, "POST", "/v1/requests", params={"deadline_ms": 30},
                             json=echo(name, delayMs=delay)) as source:
                events = source.iter_sse()
                first = next(events)
                progressed.wait()
                results[name] = [first] + list(events)

    threads = [threading.Thread(target=stream, args=("quick", 700)),
               threading.Thread(target=stream, args=("long", 5000))]
    for t in threads:
        t.start()
    progressed.wait()
    gateway.proc.signal(signal.SIGTERM)
    for t in threads:
        t.join(20)
    assert gateway.proc.wait(10) == 0, gateway.proc.tail()
    assert [e.event for e in results["quick"]] == ["progress", "final"]
    assert [e.event for e in results["long"]] == ["progress", "error"]
    assert json.loads(results["long"][1].data)["code"] == "shutting-down"


def test_bearer_tokens_scope_requests_keys_and_conversations(run_dir, spawn, gw, tmp_path):
    tokens = tmp_path / "tokens"
    tokens.write_text("# identity token\nalice alice-token-0123456789\nbob bob-token-0123456789abc\n")
    gateway = Gateway("gwtok", run_dir, gw.frontend, "--tokens", str(tokens))
    spawn.procs.append(gateway.proc)
    gateway.wait_ready()
    alice = httpx.Client(base_url=gateway.url, timeout=30, headers={"Authorization": "Bearer alice-token-0123456789"})
    bob = httpx.Client(base_url=gateway.url, timeout=30, headers={"Authorization": "Bearer bob-token-0123456789abc"})
    with alice, bob, httpx.Client(base_url=gateway.url, timeout=30) as nobody:
        refused = nobody.post("/v1/requests", json=echo())
        problem(refused, 401, "unauthorized")
        assert refused.headers["www-authenticate"].startswith("Bearer")
        problem(nobody.post("/v1/requests", headers={"Authorization": "Bearer alice-token-012345678"}, json=echo()),
                401, "unauthorized")
        # Requests: bob cannot see alice's.
        r = alice.post("/v1/requests", params={"deadline_ms": 20}, json=echo(delayMs=300))
        assert r.status_code == 202
        problem(bob.get(r.headers["location"]), 404, "unknown-request")
        assert alice.get(r.headers["location"], params={"wait": 10}).status_code == 200
        # Keys: the same key is two keys.
        key = {"Idempotency-Key": "shared-key"}
        assert alice.post("/v1/requests", headers=key, json=echo("alice")).status_code == 200
        theirs = bob.post("/v1/requests", headers=key, json=echo("bob"))
        assert theirs.status_code == 200 and "idempotent-replayed" not in theirs.headers
        # Conversations: bob cannot read alice's.
        started = alice.post("/v1/conversations", json={"intent": {"type": "SendMessage", "parameters": {
            "recipient": {"displayName": "John"}, "content": "Hi"}}})
        assert started.status_code == 201, started.text
        cid = started.headers["conversation-id"]
        problem(bob.get(f"/v1/conversations/{cid}"), 404, "unknown-conversation")
        assert alice.get(f"/v1/conversations/{cid}").json()["state"] == "asking"
    # Operations endpoints need no token.
    assert httpx.get(gateway.url + "/livez").status_code == 200


def test_permissions_limit_what_each_token_identity_may_send(run_dir, spawn, gw, tmp_path):
    """`--permissions` (Docs/PERMISSIONS.md): a token's identity, named in the file without CURVE keys, sends only
    what its `send` list allows; the rest is 403 `forbidden` before it reaches the broker, naming identity, type and
    phase. An identity the file does not name may send nothing. A file with an error stops the gateway at start."""
    tokens = tmp_path / "tokens"
    tokens.write_text("alice alice-token-0123456789\nbob bob-token-0123456789abc\ncarol carol-token-0123456789\n")
    permissions = tmp_path / "permissions.json"
    permissions.write_text(json.dumps({"version": 1, "identities": {
        "alice": {"send": {"allow": ["Echo"]}},
        "bob": {"send": {"allow": ["*"], "deny": ["Echo", "SendMessage:handle"]}},
    }}))
    gateway = Gateway("gwperm", run_dir, gw.frontend, "--tokens", str(tokens), "--permissions", str(permissions))
    spawn.procs.append(gateway.proc)
    gateway.wait_ready()

    def as_(name: str, token: str) -> httpx.Client:
        return httpx.Client(base_url=gateway.url, timeout=30, headers={"Authorization": f"Bearer {token}"})

    message = {"intent": {"type": "SendMessage", "parameters": {"recipient": {"displayName": "John"}, "content": "Hi"}}}
    with as_("alice", "alice-token-0123456789") as alice, as_("bob", "bob-token-0123456789abc") as bob, \
            as_("carol", "carol-token-0123456789") as carol:
        assert alice.post("/v1/requests", json=echo("allowed")).status_code == 200
        refused = problem(alice.post("/v1/requests", params={"phase": "resolve"}, json=message), 403, "forbidden")
        assert 'identity "alice" may not send SendMessage (resolve)' in refused["detail"], refused
        problem(bob.post("/v1/requests", json=echo("denied")), 403, "forbidden")
        assert bob.post("/v1/requests", params={"phase": "resolve"}, json=message).status_code == 200
        problem(bob.post("/v1/requests", params={"phase": "handle"}, json=message), 403, "forbidden")
        # A conversation runs the lifecycle: bob may not handle SendMessage, so he may not start one.
        problem(bob.post("/v1/conversations", json=message), 403, "forbidden")
        assert alice.post("/v1/conversations", json=echo("talk")).status_code == 201
        nobody = problem(carol.post("/v1/requests", json=echo()), 403, "forbidden")
        assert "not in the gateway's permissions file" in nobody["detail"]
    bad = tmp_path / "bad.json"
    bad.write_text('{"version": 1, "identities": {"alice": {"send": {"allow": ["Echo:nope"]}}}}')
    out = subprocess.run([str(cluster.binary()), "gateway", "--broker", gw.frontend, "--listen", "127.0.0.1:0",
                          "--tokens", str(tokens), "--permissions", str(bad)], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode != 0 and "permissions-malformed" in out.stderr and "identities.alice.send.allow[0]" in out.stderr


def test_refuses_a_non_loopback_address_without_tls():
    out = subprocess.run([str(cluster.binary()), "gateway", "--listen", "0.0.0.0:0"], capture_output=True,
                         text=True, timeout=20)
    assert out.returncode == 64, out.stderr
    assert "insecure-endpoint" in out.stderr and "--insecure-listen" in out.stderr


@pytest.mark.needs_trait("TLS")
def test_tls_with_a_self_signed_certificate(run_dir, spawn, gw, tmp_path):
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)],
                   check=True, capture_output=True, timeout=60)
    gateway = Gateway("gwtls", run_dir, gw.frontend, "--tls-cert", str(cert), "--tls-key", str(key))
    spawn.procs.append(gateway.proc)
    gateway.wait_ready()
    assert gateway.url.startswith("https://")
    with httpx.Client(base_url=gateway.url, verify=ssl.create_default_context(cafile=str(cert)), timeout=30) as https:
        r = https.post("/v1/requests", json=echo("secret"))
        assert r.status_code == 200 and r.json()["handle"]["data"]["text"] == "secret"
    with pytest.raises(httpx.TransportError):
        httpx.get(gateway.url.replace("https:", "http:") + "/livez", timeout=5)


def test_a_request_may_name_its_definition_version(http):
    """PROTOCOL.md 5.18 through HTTP: `?definition_version=N` runs the request under version N (the example workers
    serve version 1 of Echo); a version no worker serves is 404 `unknown-intent`, a malformed one 400."""
    r = http.post("/v1/requests", params={"definition_version": 1}, json=echo("v1"))
    assert r.status_code == 200 and r.json()["handle"]["data"]["text"] == "v1", r.text
    body = problem(http.post("/v1/requests", params={"definition_version": 7}, json=echo("v7")), 404, "unknown-intent")
    assert "version 7" in body["detail"] and "served: 1" in body["detail"], body
    for bad in ("0", "x", "-1", "2147483648"):
        problem(http.post("/v1/requests", params={"definition_version": bad}, json=echo("bad")), 400,
                "bad-definition-version")


def test_conversation_through_http(http):
    started = http.post("/v1/conversations", params={"record": "false"}, json={"intent": {
        "type": "SendMessage", "parameters": {"recipient": {"displayName": "John"}, "content": "Hi"}}})
    assert started.status_code == 201, started.text
    cid = started.headers["conversation-id"]
    assert started.headers["location"] == f"/v1/conversations/{cid}"
    conversation = started.json()["conversation"]
    assert conversation["state"] == "asking" and conversation["asking"][0]["parameter"] == "recipient"
    problem(http.post(f"/v1/conversations/{cid}/turns", json={"parameter": "recipient", "option": 7}), 422,
            "bad-option")
    # However large (issue 45: 2^31 and 1e30 were bad-answer), a whole number from 0 is an option: bad-option.
    for option in (2**31, 2**53, 2**63, 10**30, 1e30):
        problem(http.post(f"/v1/conversations/{cid}/turns", json={"parameter": "recipient", "option": option}), 422,
                "bad-option")
    for option in (-1, 1.5):
        problem(http.post(f"/v1/conversations/{cid}/turns", json={"parameter": "recipient", "option": option}), 400,
                "bad-answer")
    answered = http.post(f"/v1/conversations/{cid}/turns", json={"parameter": "recipient", "option": 0})
    assert answered.status_code == 200, answered.text
    assert answered.json()["handle"]["code"] == "success"
    assert answered.json()["conversation"]["ending"] == "completed"
    assert http.get(f"/v1/conversations/{cid}").json()["state"] == "ended"
    problem(http.post(f"/v1/conversations/{cid}/turns", json={"confirm": True}), 409, "conversation-ended")
    # Another one, ended by DELETE.
    other = http.post("/v1/conversations", headers={"Conversation-Id": f"c-http-{time.monotonic_ns()}"}, json={
        "intent": {"type": "SendMessage", "parameters": {"recipient": {"displayName": "John"}, "content": "Hi"}}})
    ended = http.delete(f"/v1/conversations/{other.headers['conversation-id']}")
    assert ended.status_code == 200 and ended.json()["ending"] == "cancelled"
    problem(http.post("/v1/conversations/c-none/turns", json={"bogus": 1}), 400, "bad-answer")
    problem(http.get("/v1/conversations/c-never"), 404, "unknown-conversation")


def metric(gw, name: str, labels: str) -> float:
    """The value of the series `name{labels}` in the gateway's /metrics (0 when it is absent)."""
    for line in httpx.get(gw.url + "/metrics", timeout=5).text.splitlines():
        if line.startswith(f"{name}{{{labels}}} "):
            return float(line.split()[1])
    return 0.0


def test_metrics_count_answers_by_status_and_time_them_by_route(http, gw):
    """Each answer is counted by status and timed by route; ids and unknown paths do not make series of their own."""
    ok = metric(gw, "concierge_gateway_responses_total", 'status="200"')
    timed = metric(gw, "concierge_gateway_response_seconds_count", 'route="/v1/requests"')
    other = metric(gw, "concierge_gateway_response_seconds_count", 'route="other"')
    assert http.post("/v1/requests", params={"phase": "handle"}, json=echo("metrics")).status_code == 200
    problem(http.get("/v1/no-such-route-7f3a"), 404, "not-found")
    problem(http.get("/v1/requests/never-sent-7f3a"), 404, "unknown-request")
    assert metric(gw, "concierge_gateway_responses_total", 'status="200"') >= ok + 1
    assert metric(gw, "concierge_gateway_response_seconds_count", 'route="/v1/requests"') >= timed + 1
    assert metric(gw, "concierge_gateway_response_seconds_count", 'route="other"') >= other + 1
    assert metric(gw, "concierge_gateway_response_seconds_count", 'route="/v1/requests/{id}"') >= 1
    assert "never-sent-7f3a" not in httpx.get(gw.url + "/metrics", timeout=5).text


def open_streams(gw) -> float:
    for line in httpx.get(gw.url + "/metrics", timeout=5).text.splitlines():
        if line.startswith("concierge_gateway_open_streams "):
            return float(line.split()[1])
    return 0.0


def test_thousands_of_idle_streams_do_not_stall_fast_requests(http, gw):
    """2,000 event streams that never read, all watching one long request, while fast requests complete."""
    long = http.post("/v1/requests", params={"deadline_ms": 20}, json=echo("long", delayMs=60000))
    assert long.status_code == 202
    request = (f"GET {long.headers['location']} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
               "Accept: text/event-stream\r\n\r\n").encode()
    readers: list[socket.socket] = []
    try:
        for _ in range(2000):
            s = socket.create_connection(("127.0.0.1", gw.port), timeout=10)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            s.sendall(request)
            readers.append(s)
        end = time.monotonic() + 30
        while open_streams(gw) < 2000 and time.monotonic() < end:
            time.sleep(0.1)
        assert open_streams(gw) >= 2000
        # Fast requests, several at once, each answered promptly.
        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            def one(i: int) -> float:
                started = time.monotonic()
                r = http.post("/v1/requests", json=echo(f"fast{i}"))
                assert r.status_code == 200
                return time.monotonic() - started
            durations = sorted(pool.map(one, range(200)))
        assert durations[int(len(durations) * 0.99)] < 2.0, durations[-5:]
    finally:
        http.delete(long.headers["location"])
        for s in readers:
            s.close()
    end = time.monotonic() + 20
    while open_streams(gw) > 0 and time.monotonic() < end:
        time.sleep(0.1)
    assert open_streams(gw) == 0


BROWSER_PAGE = """<html><body><pre id="out">waiting</pre><script>
const base = "%s";
const out = document.getElementById("out");
fetch(base + "/v1/requests?deadline_ms=20", {method: "POST", headers: {"Content-Type": "application/json"},
  body: JSON.stringify({intent: {type: "Echo", parameters: {text: "browser", delayMs: 1000}}})})
.then(r => {
  const seen = ["status:" + r.status];
  const events = new EventSource(base + r.headers.get("Location"));
  events.addEventListener("progress", e => seen.push("progress:" + JSON.parse(e.data).state));
  events.addEventListener("final", e => {
    seen.push("final:" + JSON.parse(e.data).handle.data.text);
    events.close();
    out.textContent = "DONE " + seen.join(",");
  });
}).catch(e => { out.textContent = "FAILED " + e; });
</script></body></html>
"""


@pytest.mark.skipif(not shutil.which("chromium") and not shutil.which("/usr/bin/chromium"), reason="no chromium")
def test_browser_event_source_gets_progress_then_final(run_dir, spawn, gw, tmp_path):
    """A page (another origin) POSTs with fetch, then follows the request's Location with EventSource."""
    gateway = Gateway("gwcors", run_dir, gw.frontend, "--cors-origin", "*")
    spawn.procs.append(gateway.proc)
    gateway.wait_ready()
    page = tmp_path / "page.html"
    page.write_text(BROWSER_PAGE % gateway.url)
    out = subprocess.run([shutil.which("chromium") or "/usr/bin/chromium", "--headless", "--no-sandbox", "--disable-gpu",
                          f"--user-data-dir={tmp_path / 'profile'}", "--virtual-time-budget=20000", "--dump-dom",
                          page.as_uri()], capture_output=True, text=True, timeout=60)
    assert "DONE status:202,progress:running,final:browser" in out.stdout, out.stdout[-2000:] + out.stderr[-2000:]


def test_up_runs_a_gateway_next_to_the_broker(run_dir, tmp_path):
    """`concierge up --gateway`: broker, pool and gateway in one process tree; SIGTERM stops them all."""
    proc = cluster.Proc("upgw", [str(cluster.binary()), "up", "--frontend", f"ipc://{run_dir}/upgw-fe.sock",
                                 "--backend", f"ipc://{run_dir}/upgw-be.sock", "--control",
                                 f"ipc://{run_dir}/upgw.ctl", "--workers", "1", "--gateway", "--gateway-listen",
                                 "127.0.0.1:0", "--startup-grace-ms", "100"], run_dir)
    gateway = Gateway.__new__(Gateway)
    gateway.proc, gateway.url, gateway.port = proc, "", 0
    try:
        gateway.wait_ready()
        end = time.monotonic() + 20
        while True:
            r = httpx.post(gateway.url + "/v1/requests", json=echo("up"), timeout=10)
            if r.status_code == 200 or time.monotonic() > end:
                break
            time.sleep(0.1)  # the pool's worker may still be registering
        assert r.status_code == 200 and r.json()["handle"]["data"]["text"] == "up", r.text
        proc.signal(signal.SIGTERM)
        assert proc.wait(15) == 0, proc.tail()
    finally:
        proc.stop(timeout=5)


TRACEPARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"


@pytest.mark.parametrize("tracing", [False, pytest.param(True, marks=pytest.mark.needs_trait("Tracing"))])
def test_trace_headers_reach_the_broker(run_dir, spawn, tracing):
    """A valid traceparent/tracestate goes to the broker unchanged in a CIPC04 REQUEST (F8, F9); with --tracing, the
    gateway's span in the caller's trace. Without tracing, an invalid one (or none) sends no trace context at all."""
    from gateway_fake_broker import FakeBroker
    fake = FakeBroker(f"ipc://{run_dir}/fake-{int(tracing)}.sock")
    spawn.closables.append(fake)
    gateway = Gateway(f"gwtrace{int(tracing)}", run_dir, fake.endpoint, *(["--tracing"] if tracing else []))
    spawn.procs.append(gateway.proc)
    gateway.wait_ready()
    with httpx.Client(base_url=gateway.url, timeout=30) as http:
        traced = http.post("/v1/requests", headers={"traceparent": TRACEPARENT, "tracestate": "vendor=1"},
                           json=echo("traced"))
        assert traced.status_code == 200, traced.text
        for headers in ({"traceparent": TRACEPARENT.replace("00-", "ff-", 1)}, {}):
            assert http.post("/v1/requests", headers=headers, json=echo()).status_code == 200
    first, *others = fake.requests
    assert first[0] == b"CIPC04" and len(first) == 10
    if tracing:
        # The gateway's span is the parent when an exporter is bootstrapped; without one, the caller's context.
        assert first[8].split(b"-")[1] == TRACEPARENT.split("-")[1].encode()
    else:
        assert first[8] == TRACEPARENT.encode() and first[9] == b"vendor=1"
    if not tracing:
        assert [frames[0] for frames in others] == [b"CIPC01", b"CIPC01"]
    else:
        # The gateway's span starts a trace of its own (no tracer bootstrapped: no trace at all).
        for frames in others:
            assert frames[0] == b"CIPC01" or frames[8].split(b"-")[1] != TRACEPARENT.split("-")[1].encode()


def keygen(directory, name: str):
    """A CURVE key pair from `concierge keygen`: (public key file, secret key file)."""
    subprocess.run([str(cluster.binary()), "keygen", "--out", str(directory / name)], check=True,
                   capture_output=True, timeout=20)
    return directory / f"{name}.pub", directory / f"{name}.secret"


def test_curve_to_the_broker(run_dir, spawn, tmp_path):
    """With CURVE on the broker, the gateway talks CURVE with its own key (on the broker's client list)."""
    broker_pub, broker_secret = keygen(tmp_path, "broker")
    worker_pub, worker_secret = keygen(tmp_path, "worker")
    gateway_pub, gateway_secret = keygen(tmp_path, "gateway")
    broker = cluster.Broker("gwcurveb", run_dir, {"curve-secret-key": broker_secret, "client-keys": gateway_pub,
                                                   "worker-keys": worker_pub, "startup-grace-ms": 100})
    spawn.procs.append(broker.proc)
    worker = cluster.Proc("gwcurvew", [str(cluster.binary()), "worker", "--broker", broker.backend, "--name",
                                       "gwcurvew", "--curve-server-key", str(broker_pub), "--curve-secret-key",
                                       str(worker_secret), "--log-level", "warning"], run_dir)
    spawn.procs.append(worker)
    gateway = Gateway("gwcurve", run_dir, broker.frontend, "--curve-server-key", str(broker_pub),
                      "--curve-secret-key", str(gateway_secret))
    spawn.procs.append(gateway.proc)
    gateway.wait_ready()  # /readyz: the broker answered a ping over CURVE
    with httpx.Client(base_url=gateway.url, timeout=30) as http:
        end = time.monotonic() + 20
        while True:
            r = http.post("/v1/requests", json=echo("curve"))
            if r.status_code == 200 or time.monotonic() > end:
                break
            time.sleep(0.1)  # the worker may still be registering
        assert r.status_code == 200 and r.json()["handle"]["data"]["text"] == "curve", r.text


@pytest.mark.needs_trait("TLS")
def test_tls_client_certificates(run_dir, spawn, gw, tmp_path):
    """--tls-client-ca: a client with a certificate from that CA is served; one without is refused."""
    def openssl(*args: str) -> None:
        subprocess.run(["openssl", *args], check=True, capture_output=True, timeout=60)

    ca_key, ca, key, cert = (tmp_path / n for n in ("ca.key", "ca.pem", "key.pem", "cert.pem"))
    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=test-ca", "-keyout",
            str(ca_key), "-out", str(ca))
    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1", "-addext",
            "subjectAltName=IP:127.0.0.1", "-keyout", str(key), "-out", str(cert))
    client_key, client_csr, client_cert = (tmp_path / n for n in ("client.key", "client.csr", "client.pem"))
    openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=caller", "-keyout", str(client_key), "-out",
            str(client_csr))
    openssl("x509", "-req", "-in", str(client_csr), "-CA", str(ca), "-CAkey", str(ca_key), "-CAcreateserial",
            "-days", "1", "-out", str(client_cert))
    gateway = Gateway("gwmtls", run_dir, gw.frontend, "--tls-cert", str(cert), "--tls-key", str(key),
                      "--tls-client-ca", str(ca))
    spawn.procs.append(gateway.proc)
    gateway.wait_ready()
    trusted = ssl.create_default_context(cafile=str(cert))
    trusted.load_cert_chain(str(client_cert), str(client_key))
    with httpx.Client(base_url=gateway.url, verify=trusted, timeout=30) as https:
        assert https.post("/v1/requests", json=echo("mutual")).status_code == 200
    with pytest.raises(httpx.TransportError):
        httpx.get(gateway.url + "/livez", verify=ssl.create_default_context(cafile=str(cert)), timeout=5)


def test_a_broker_restart_ends_a_lost_request_and_the_gateway_goes_on(run_dir, spawn):
    """The broker dies with a request in flight and comes back without it: the client's STATUS sweep ends the
    request broker-restarted (502), and new requests are served again."""
    broker = spawn.broker(heartbeat_ms=250)
    spawn.worker(broker, heartbeat_ms=250)
    gateway = Gateway("gwrestart", run_dir, broker.frontend, heartbeat_ms=250)
    spawn.procs.append(gateway.proc)
    gateway.wait_ready()
    with httpx.Client(base_url=gateway.url, timeout=30) as http:
        r = http.post("/v1/requests", params={"deadline_ms": 20}, json=echo(delayMs=20000))
        assert r.status_code == 202
        broker.proc.kill_group()
        broker.proc.wait(5)
        again = cluster.Broker(broker.name, run_dir, {"heartbeat-ms": 250, "startup-grace-ms": 100})
        spawn.procs.append(again.proc)
        again.wait_ready()
        body = problem(http.get(r.headers["location"], params={"wait": 20}), 502, "broker-restarted")
        assert body["requestId"] == r.headers["concierge-request-id"]
        spawn.worker(again, heartbeat_ms=250)
        assert http.post("/v1/requests", json=echo("back")).status_code == 200
