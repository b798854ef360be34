"""The HTTP gateway when its broker is away, and while it drains (Docs/GATEWAY.md, "When the broker is away" and
"Draining"), with real broker, worker and gateway processes: /readyz answers within its 1 s bound, requests answer
by their deadline (503 `unavailable`, `Retry-After`), and a broker stopped, SIGKILLed or never started is told
apart from one that answers; after SIGTERM, open connections get 503 `shutting-down` with `Connection: close`,
/readyz says 503, and the open requests get their ending."""

from __future__ import annotations

import json
import signal
import socket
import threading
import time

import httpx
import pytest
from httpx_sse import connect_sse

import cluster
from gateway_procs import Gateway, echo

# Generous next to the documented bounds (1 s for /readyz, the deadline for a request), far below the 13 s a
# gateway that waits for its client's reconnect timeout takes.
PROBE_BOUND = 3.0
DEADLINE_BOUND = 5.0


def timed(call):
    start = time.monotonic()
    response = call()
    return response, time.monotonic() - start


# `unavailable`: no broker answered by the deadline; `connection-lost`: the client had already given up looking for
# one (10 s without a broker). Both are 503 with Retry-After.
AWAY = ("unavailable", "connection-lost")


def assert_unavailable(response: httpx.Response) -> None:
    assert response.status_code == 503, response.text
    body = response.json()
    assert body["code"] in AWAY, body
    assert response.headers["retry-after"] == "1"
    assert response.headers["concierge-request-id"] == body["requestId"]


def assert_away(http: httpx.Client) -> None:
    """/readyz is 503 within its bound, and a request with a 500 ms deadline is 503 `unavailable` by then."""
    response, took = timed(lambda: http.get("/readyz"))
    assert response.status_code == 503 and took < PROBE_BOUND, (response.status_code, took, response.text)
    response, took = timed(lambda: http.post("/v1/requests", params={"deadline_ms": 500}, json=echo("away")))
    assert_unavailable(response)
    assert took < DEADLINE_BOUND, took


def started(run_dir, spawn, name: str, *flags: str, worker: bool = True) -> tuple[cluster.Broker, Gateway]:
    """A broker (with one example worker) and a ready gateway in front of it, stopped by `spawn` at the end."""
    broker = spawn.broker()
    if worker:
        spawn.worker(broker)
    gateway = Gateway(name, run_dir, broker.frontend, *flags)
    spawn.procs.append(gateway.proc)
    gateway.wait_ready()
    return broker, gateway


def wait_until(predicate, timeout: float = 30.0) -> None:
    end = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < end, "the condition did not hold in time"
        time.sleep(0.05)


def test_no_broker_ever_started(run_dir, spawn):
    gateway = Gateway("gwnone", run_dir, f"ipc://{run_dir}/nobody-fe.sock")
    spawn.procs.append(gateway.proc)
    gateway.wait_ready(broker=False)
    with httpx.Client(base_url=gateway.url, timeout=30) as http:
        for _ in range(3):  # every time, not just the first
            assert_away(http)
        # The probe answers from what the gateway knows: no connection, no wait at all.
        response, took = timed(lambda: http.get("/readyz"))
        assert response.text.strip() == "no broker connection" and took < 1.0, took
        # STATUS and CANCEL are bounded too.
        response, took = timed(lambda: http.get("/v1/requests/nope", params={"wait": 0}))
        assert_unavailable(response)
        assert took < DEADLINE_BOUND, took
        response, took = timed(lambda: http.delete("/v1/requests/nope"))
        assert response.status_code == 503 and took < DEADLINE_BOUND, (response.text, took)
        # Conversations: a turn by its deadline, a read and an END bounded.
        response, took = timed(lambda: http.post("/v1/conversations", params={"deadline_ms": 500},
                                                 json=echo("turn")))
        assert_unavailable(response)
        assert took < DEADLINE_BOUND, took
        for call in (lambda: http.get("/v1/conversations/c-nope"), lambda: http.delete("/v1/conversations/c-nope")):
            response, took = timed(call)
            assert response.status_code == 503 and response.json()["code"] in AWAY, response.text
            assert response.headers["retry-after"] == "1"
            assert took < DEADLINE_BOUND, took


@pytest.mark.parametrize("how", ["stop", "kill"])
def test_broker_stopped_or_killed_then_restarted(run_dir, spawn, how):
    broker = spawn.broker(heartbeat_ms=250)
    spawn.worker(broker, heartbeat_ms=250)
    gateway = Gateway(f"gwaway{how}", run_dir, broker.frontend, heartbeat_ms=250)
    spawn.procs.append(gateway.proc)
    gateway.wait_ready()
    with httpx.Client(base_url=gateway.url, timeout=30) as http:
        assert http.post("/v1/requests", json=echo("before")).status_code == 200
        if how == "kill":
            broker.proc.kill_group()
        else:
            broker.proc.signal(signal.SIGTERM)
        broker.proc.wait(20)
        # Observable: the gateway noticed (the probe says so), then every answer is in time.
        wait_until(lambda: http.get("/readyz").status_code == 503)
        for _ in range(2):
            assert_away(http)
        again = cluster.Broker(broker.name, run_dir, {"heartbeat-ms": 250, "startup-grace-ms": 100})
        spawn.procs.append(again.proc)
        again.wait_ready()
        spawn.worker(again, heartbeat_ms=250)
        wait_until(lambda: http.get("/readyz").status_code == 200)
        wait_until(lambda: http.post("/v1/requests", json=echo("after")).status_code == 200)


def test_a_silent_broker_is_not_ready_within_a_second(run_dir, spawn):
    """A frozen broker (SIGSTOP) keeps its connection open: the probe's ping times out at 1 s."""
    broker, gateway = started(run_dir, spawn, "gwfrozen")
    with httpx.Client(base_url=gateway.url, timeout=30) as http:
        broker.proc.signal(signal.SIGSTOP)
        try:
            response, took = timed(lambda: http.get("/readyz"))
            assert response.status_code == 503, response.text
            assert took < PROBE_BOUND, took
        finally:
            broker.proc.signal(signal.SIGCONT)
        wait_until(lambda: http.get("/readyz").status_code == 200)


def test_probes_answer_head(run_dir, spawn):
    _, gateway = started(run_dir, spawn, "gwhead", worker=False)
    with httpx.Client(base_url=gateway.url, timeout=30) as http:
        for path in ("/livez", "/readyz"):
            response = http.head(path)
            assert response.status_code == 200, (path, response.status_code)
            assert response.content == b""
            assert response.headers["content-type"].startswith("text/plain")
        response = http.put("/livez")
        assert response.status_code == 405 and response.headers["allow"] == "GET, HEAD"


def test_draining_answers_open_connections_and_lets_open_requests_end(run_dir, spawn):
    _, gateway = started(run_dir, spawn, "gwdrain2", "--drain-timeout-ms", "20000")
    events: list = []
    progressed = threading.Event()

    def stream() -> None:
        with httpx.Client(base_url=gateway.url, timeout=60) as http:
            with connect_sse(http, "POST", "/v1/requests", params={"deadline_ms": 30},
                             json=echo("slow", delayMs=4000)) as source:
                for event in source.iter_sse():
                    events.append(event)
                    progressed.set()

    thread = threading.Thread(target=stream)
    thread.start()
    with httpx.Client(base_url=gateway.url, timeout=30) as open_connection:
        assert open_connection.get("/livez").status_code == 200  # the keep-alive connection is open
        assert progressed.wait(30)
        gateway.proc.signal(signal.SIGTERM)
        # New connections are still accepted while draining: a probe says 503 (no "connection refused").
        wait_until(lambda: httpx.get(gateway.url + "/readyz", timeout=5).status_code == 503)
        assert httpx.get(gateway.url + "/readyz", timeout=5).text.strip() == "draining"
        response = open_connection.post("/v1/requests", json=echo("late"))
        assert response.status_code == 503, response.text
        assert response.json()["code"] == "shutting-down"
        assert response.headers["connection"] == "close"
        assert response.headers["retry-after"] == "1"
    thread.join(60)
    assert [e.event for e in events] == ["progress", "final"], events
    assert json.loads(events[-1].data)["intent"]["type"] == "Echo"
    assert gateway.proc.wait(20) == 0, gateway.proc.tail()


def test_keep_alive_and_pipelining_on_one_connection(run_dir, spawn):
    """HTTP/1.1 pipelining: many requests written at once on one connection are all answered, in order."""
    _, gateway = started(run_dir, spawn, "gwpipe")
    count = 40
    requests = b""
    for index in range(count):
        body = json.dumps(echo(f"pipelined-{index}")).encode()
        requests += (b"POST /v1/requests HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                     b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
    with socket.create_connection(("127.0.0.1", gateway.port), timeout=30) as connection:
        connection.sendall(requests)  # all of them before reading any answer
        reader = connection.makefile("rb")
        texts = []
        for _ in range(count):
            status = reader.readline()
            assert status.startswith(b"HTTP/1.1 200"), status
            length = 0
            while (line := reader.readline()) not in (b"\r\n", b""):
                name, _, value = line.decode().partition(":")
                if name.lower() == "content-length":
                    length = int(value)
            texts.append(json.loads(reader.read(length))["intent"]["parameters"]["text"])
    assert texts == [f"pipelined-{index}" for index in range(count)]


def test_outcomes_are_200_as_the_status_table_says(run_dir, spawn):
    """GATEWAY.md, "What each status means": a lifecycle stopped at a disambiguation, a confirm's failure code and a
    handle's `failure` are outcomes (200 with the Interaction), not problems."""
    _, gateway = started(run_dir, spawn, "gwtable")
    with httpx.Client(base_url=gateway.url, timeout=30) as http:
        stopped = http.post("/v1/requests", json={"intent": {"type": "SendMessage", "parameters": {
            "recipient": {"displayName": "John"}, "content": "Hi"}}})
        assert stopped.status_code == 200, stopped.text
        assert stopped.json()["resolve"]["recipient"]["kind"] == "disambiguation"
        assert "handle" not in stopped.json()
        declined = http.post("/v1/requests", json={"intent": {"type": "SendPayment", "parameters": {
            "payee": {"displayName": "Anna"}, "currencyAmount": {"amount": "9000", "currencyCode": "EUR"}}}})
        assert declined.status_code == 200, declined.text
        assert declined.json()["confirm"]["code"] == "failureInsufficientFunds"
        failed = http.post("/v1/requests", params={"phase": "handle"}, json={"intent": {
            "type": "SendMessage", "parameters": {"recipient": {"displayName": "John"}, "content": "Hi"}}})
        assert failed.status_code == 200, failed.text
        assert failed.json()["handle"]["code"] == "failure"


def test_the_documented_ready_line_finds_the_port(run_dir, spawn, tmp_path):
    """The shell lines of GATEWAY.md that find an ephemeral port in the ready log line, run as written."""
    import os
    import re
    import subprocess
    from pathlib import Path

    text = (Path(__file__).parents[2] / "Docs" / "GATEWAY.md").read_text()
    script = re.search(r"find an ephemeral port:\n\n```\n.*?\n```\n\n```sh\n(.*?)```", text, re.S).group(1)
    broker = spawn.broker()
    binary = Path(os.environ["CONCIERGE_BIN"]).resolve()
    script = script.replace("concierge gateway", f"{binary} gateway --broker {broker.frontend}")
    out = subprocess.run(
        ["bash", "-c", script + 'echo "$port"; kill %1; wait'], cwd=tmp_path, capture_output=True, text=True,
        timeout=60)
    port = int(out.stdout.strip().splitlines()[-1])
    assert port > 0, out


def doc_block(heading: str, language: str) -> str:
    """The first fenced block of `language` under GATEWAY.md's `heading`."""
    import re
    from pathlib import Path

    text = (Path(__file__).parents[2] / "Docs" / "GATEWAY.md").read_text()
    section = text[text.index(heading):]
    return re.search(rf"```{language}\n(.*?)```", section, re.S).group(1)


def test_the_documented_curl_and_python_examples_run_as_written(run_dir, spawn):
    """GATEWAY.md's curl block and Python block, run as written against a live gateway with two example workers:
    every step answers what its comment says."""
    import subprocess
    import sys

    broker, gateway = started(run_dir, spawn, "gwdocs")
    spawn.worker(broker)
    script = doc_block("### curl", "sh").replace("http://127.0.0.1:8080", gateway.url)
    out = subprocess.run(["bash", "-euo", "pipefail", "-c", script], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr + out.stdout
    text = out.stdout
    assert text.count('"code":"success"') >= 4, text
    assert text.count("event: progress") == 2 and text.count("event: final") == 2, text
    assert '"code":"cancelled"' in text and '"status":409' in text, text
    assert "attempt 1: ran" in text and "attempt 2: ran" not in text, text
    assert "idempotent-replayed: true" in text.lower(), text
    assert '"ending":"completed"' in text, text
    assert "201 \n201 true\n422 \n" in text, text
    python = doc_block("### Python", "python").replace("http://127.0.0.1:8080", gateway.url)
    out = subprocess.run([sys.executable, "-c", python], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr + out.stdout
    assert out.stdout.strip() == "200 None", out.stdout
