"""Sections 5.16 and 5.18 (CIPW04): workers announce their intent definitions in READY; the broker serves one
definition per type and version, refuses a worker whose definition differs under a version already served (ERROR
definition-mismatch), serves another version side by side, lists the served definitions in STATS and
`concierge intents`.

The Swift worker is real (`concierge worker`); the disagreeing workers are raw DEALERs speaking frames by hand, as a
worker in another language would."""

from __future__ import annotations

import json
import subprocess
import threading
import time

import zmq

import cip
import cluster
from cip import CIPW3, CIPW4
from test_worker_v2 import stats_query

HB = 250


def echo_definition() -> dict:
    return json.loads((cip.SCHEMAS / "intents" / "Echo.json").read_text())


def register_raw(endpoint: str, name: bytes, frames: list[bytes], wait_ms: int = 3000) -> tuple[zmq.Socket, list]:
    """Sends READY from a DEALER named `name`; returns it and the broker's first answer (HEARTBEAT when registered,
    ERROR when refused), or [] within `wait_ms`."""
    sock = zmq.Context.instance().socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 0)
    sock.setsockopt(zmq.ROUTING_ID, name)
    sock.connect(endpoint)
    sock.send_multipart(frames)
    if sock.poll(wait_ms) == 0:
        return sock, []
    return sock, sock.recv_multipart()


def stats(broker) -> dict:
    answer = stats_query(broker.backend, [CIPW4, b"STATS"])
    assert answer is not None and answer[:2] == [CIPW4, b"STATS"], answer
    body = json.loads(answer[2])
    cip.SCHEMA_SET.check("stats.schema.json", body, "STATS body")
    return body


def register_echo_version_2(broker) -> tuple[zmq.Socket, list]:
    """A raw worker `w-v2` announcing Echo version 2: version 1 plus an optional `loud` (a compatible change)."""
    upgraded = echo_definition()
    upgraded["version"] = 2
    upgraded["parameters"].append({"name": "loud", "type": "boolean", "list": False, "required": False,
                                   "description": "Shout."})
    return register_raw(broker.backend, b"w-v2",
                        [CIPW4, b"READY", b"1", b"w-v2", b"Echo", json.dumps(upgraded).encode()])


def served(body: dict, intent_type: str) -> list[dict]:
    return next(t for t in body["intent_types"] if t["name"] == intent_type)["definitions"]


def test_the_swift_worker_announces_its_definitions_and_stats_lists_them(spawn):
    broker = spawn.broker(heartbeat_ms=HB)
    spawn.worker(broker, name="w-swift", heartbeat_ms=HB)
    body = stats(broker)
    (echo,) = served(body, "Echo")
    assert echo["workers"] == ["w-swift"]
    assert echo["version"] == 1
    assert echo["definition"] == echo_definition()
    assert echo["digest"].startswith("sha256:") and len(echo["digest"]) == 7 + 64
    # `concierge intents` shows the same, as a table and as JSON.
    table = subprocess.run([str(cluster.binary()), "intents", "--broker", broker.backend], capture_output=True,
                           text=True, timeout=30)
    assert table.returncode == 0, table.stderr
    line = next(row for row in table.stdout.splitlines() if row.startswith("Echo "))
    assert echo["digest"][7:19] in line and "w-swift" in line
    printed = subprocess.run([str(cluster.binary()), "intents", "--broker", broker.backend, "--definition", "Echo"],
                             capture_output=True, text=True, timeout=30)
    assert printed.returncode == 0, printed.stderr
    assert json.loads(printed.stdout) == echo_definition()


def test_a_worker_with_another_definition_is_refused_and_gets_no_job(spawn):
    broker = spawn.broker(heartbeat_ms=HB)
    spawn.worker(broker, name="w-swift", heartbeat_ms=HB)
    changed = echo_definition()
    changed["parameters"][0]["required"] = True
    sock, answer = register_raw(broker.backend, b"w-other",
                                [CIPW4, b"READY", b"4", b"w-other", b"Echo", json.dumps(changed).encode()])
    try:
        assert answer[:3] == [CIPW4, b"ERROR", b"definition-mismatch"], answer
        message = answer[3].decode()
        assert "Echo" in message and "w-swift" in message
        assert [w["name"] for w in stats(broker)["workers"]] == ["w-swift"]
        assert "definition" in broker.proc.tail(50)  # the broker logged the refusal
    finally:
        sock.close()
    # The same definition, written with other white space and key order, is the same digest: registered.
    same = json.dumps(echo_definition(), indent=3, sort_keys=True).encode()
    sock, answer = register_raw(broker.backend, b"w-same", [CIPW4, b"READY", b"1", b"w-same", b"Echo", same])
    try:
        assert answer == [CIPW4, b"HEARTBEAT"], answer
        assert sorted(served(stats(broker), "Echo")[0]["workers"]) == ["w-same", "w-swift"]
    finally:
        sock.close()


def test_a_rolling_upgrade_serves_both_versions_without_a_flag(spawn):
    """5.18: another version is served side by side on a broker started with no flag at all."""
    broker = spawn.broker(heartbeat_ms=HB)
    spawn.worker(broker, name="w-v1", heartbeat_ms=HB)
    sock, answer = register_echo_version_2(broker)
    try:
        assert answer == [CIPW4, b"HEARTBEAT"], answer
        versions = {d["version"]: d["workers"] for d in served(stats(broker), "Echo")}
        assert versions == {1: ["w-v1"], 2: ["w-v2"]}
    finally:
        sock.close()


def test_a_malformed_definition_frame_is_refused_malformed(spawn):
    broker = spawn.broker(heartbeat_ms=HB)
    for frames in ([CIPW4, b"READY", b"1", b"w-bad", b"Echo"],
                   [CIPW4, b"READY", b"1", b"w-bad", b"Echo", b"{not json"],
                   [CIPW4, b"READY", b"1", b"w-bad", b"Echo", b'{"intent": "Other"}']):
        sock, answer = register_raw(broker.backend, b"w-bad", frames)
        sock.close()
        assert answer[:3] == [CIPW4, b"ERROR", b"malformed"], (frames, answer)
    assert stats(broker)["workers"] == []


def test_older_workers_register_without_a_definition(spawn):
    broker = spawn.broker(heartbeat_ms=HB)
    sock, answer = register_raw(broker.backend, b"w-old", [CIPW3, b"READY", b"1", b"w-old", b"Echo"])
    try:
        assert answer == [CIPW3, b"HEARTBEAT"], answer
        assert served(stats(broker), "Echo") == []
    finally:
        sock.close()


def test_send_checks_an_intent_against_the_served_definition_before_sending(spawn):
    broker = spawn.broker(heartbeat_ms=HB)
    spawn.worker(broker, name="w-swift", heartbeat_ms=HB)

    def send(intent: dict, phase: str = "lifecycle") -> subprocess.CompletedProcess:
        return subprocess.run([str(cluster.binary()), "send", "--broker", broker.frontend, "--check", broker.backend,
                               "--phase", phase, json.dumps(intent)], capture_output=True, text=True, timeout=60)

    good = send({"type": "Echo", "parameters": {"text": "hi"}})
    assert good.returncode == 0, good.stderr
    assert json.loads(good.stdout.splitlines()[-1])["status"] == "final"
    for intent, phase, code in (({"type": "Echo", "parameters": {"colour": "red"}}, "lifecycle", "unknown-parameter"),
                                ({"type": "Echo", "parameters": {"delayMs": "soon"}}, "lifecycle", "invalid-type"),
                                ({"type": "SendMessage", "parameters": {"content": "x"}}, "handle",
                                 "missing-parameter")):
        bad = send(intent, phase)
        assert bad.returncode == 1, bad.stderr
        assert code in bad.stderr and "nothing was sent" in bad.stderr, bad.stderr
        assert bad.stdout == ""
    unknown = send({"type": "Nobody", "parameters": {}})
    assert unknown.returncode == 1 and "serves Nobody" in unknown.stderr, unknown.stderr


def test_send_check_given_the_client_endpoint_says_which_endpoint_it_needs(spawn):
    """Issue 45: `send --check` reads definitions from the worker endpoint; given the client endpoint (the usual
    mix-up), it says so and names the worker endpoint, rather than printing the frames it got back."""
    broker = spawn.broker(heartbeat_ms=HB)
    spawn.worker(broker, name="w-swift", heartbeat_ms=HB)
    out = subprocess.run([str(cluster.binary()), "send", "--broker", broker.frontend, "--check", broker.frontend,
                          json.dumps({"type": "Echo", "parameters": {"text": "hi"}})],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 2, out.stderr
    assert "client endpoint" in out.stderr and "--backend" in out.stderr and "nothing was sent" in out.stderr, \
        out.stderr
    assert "answered STATS with" not in out.stderr, out.stderr


def test_send_check_uses_the_version_that_will_serve(spawn):
    """5.18: with two versions served, `send --check` checks against the oldest (what a request naming no version
    runs under) and says how to name a later one; with --definition-version, against that version."""
    broker = spawn.broker(heartbeat_ms=HB)
    spawn.worker(broker, name="w-v1", heartbeat_ms=HB)
    sock, answer = register_echo_version_2(broker)
    try:
        assert answer == [CIPW4, b"HEARTBEAT"], answer
        loud = json.dumps({"type": "Echo", "parameters": {"text": "hi", "loud": True}})
        base = [str(cluster.binary()), "send", "--broker", broker.frontend, "--check", broker.backend, "--phase",
                "resolve"]
        oldest = subprocess.run(base + [loud], capture_output=True, text=True, timeout=60)
        assert oldest.returncode == 1, oldest.stderr
        assert "unknown-parameter" in oldest.stderr and "--definition-version" in oldest.stderr, oldest.stderr
        missing = subprocess.run(base + ["--definition-version", "5", loud], capture_output=True, text=True,
                                 timeout=60)
        assert missing.returncode == 1 and "version 5" in missing.stderr and "served: 1, 2" in missing.stderr, \
            missing.stderr
        # Version 2 passes the check; the request then goes to its worker (the raw socket, which never answers and
        # soon expires: the short timeout ends the wait).
        named = subprocess.run(base + ["--definition-version", "2", "--deadline-ms", "200", "--timeout", "1", loud],
                               capture_output=True, text=True, timeout=60)
        assert "unknown-parameter" not in named.stderr and "does not match" not in named.stderr, named.stderr
    finally:
        sock.close()


def test_a_refused_worker_exits_78_and_its_pool_shows_it_without_restarting_it(spawn, run_dir):
    """5.16, issue 45: the reference worker refused `definition-mismatch` exits 78 (EX_CONFIG) after one clear
    error; `concierge pool` does not restart it (no crash loop), lists it under `refused`, and `concierge intents`
    names it."""
    broker = spawn.broker(heartbeat_ms=HB)
    changed = echo_definition()
    changed["description"] = "Another Echo under the same version."
    sock, answer = register_raw(broker.backend, b"w-other",
                                [CIPW4, b"READY", b"1", b"w-other", b"Echo", json.dumps(changed).encode()])
    heartbeat = threading.Event()

    def keep_alive() -> None:  # the raw worker stays registered while the others are refused
        while not heartbeat.wait(HB / 1000 / 2):
            sock.send_multipart([CIPW4, b"HEARTBEAT"])

    threading.Thread(target=keep_alive, daemon=True).start()
    try:
        assert answer == [CIPW4, b"HEARTBEAT"], answer
        worker = cluster.start_worker(broker, run_dir, "w-refused", heartbeat_ms=HB)
        spawn.procs.append(worker)
        assert worker.popen.wait(timeout=30) == 78, worker.tail()
        log = worker.tail()
        assert log.count("definition-refused") == 1 and "exit 78" in log, log
        pool = cluster.start_pool(broker, run_dir, "refpool", workers=1, heartbeat_ms=HB)
        spawn.procs.append(pool)
        end = time.monotonic() + 30
        status: dict = {}
        while time.monotonic() < end:
            status = json.loads(cluster.pool_status(run_dir, "refpool"))
            if status.get("refused"):
                break
            time.sleep(0.1)
        assert list(status.get("refused", {}).keys()) == ["0"], status
        listing = subprocess.run([str(cluster.binary()), "intents", "--broker", broker.backend],
                                 capture_output=True, text=True, timeout=30).stdout
        assert "refused workers" in listing and "definition-mismatch" in listing, listing
        assert pool.alive() and status.get("restarts", 0) == 0, status
    finally:
        heartbeat.set()
        sock.close()
