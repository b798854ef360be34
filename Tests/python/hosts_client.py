"""The client host of test_other_hosts.py: run inside the client's network namespace (`ip netns exec ... python3
hosts_client.py ...`), it drives a bounded load of Echo requests over CURVE and keeps the books of every request.

Two CIPC01 connections (cip.Client over a CURVE DEALER: the broker's public key, this client's key pair, fixed
routing ids) keep --window requests in flight: Echo `handle`, `resolve`, `confirm` or `lifecycle`, each waiting
DELAY_MS in one phase (`delayPhase`), with a first-reply deadline (DEADLINE_MS) long enough that a request queued
behind the others is never shed `busy`, even while half the workers are gone. Every SWEEP_S the client asks STATUS
about each request without an ending (the answers say `queued`, or `running` and on which worker). Everything
received is recorded with its arrival time (time.monotonic(): one clock for every process of the machine, so the
test compares it with its own).

Standard output carries one JSON object per line for the test: {"e": "ready"} once both connections answered PING
(the CURVE handshakes passed), {"e": "sent", "n": N} every 10 requests, {"e": "final", "worker": W, "t": T} for
each final REPLY that names its worker (confirm and handle data carry it), {"e": "done", ...} at the end. Standard
input takes commands, one per line: `stop` (send no more once --min-requests were sent, then drain). End of input
counts as `stop`. The load also stops at --max-requests or after --max-seconds.

After the drain every request id is asked STATUS once more (its stored ending must answer it), and the books go to
--out as JSON: per request its kind, the wait, the REPLYs and STATUS answers with times, states and workers, and a
list of problems (protocol violations, messages for unknown ids, STATUS answers that differ from the ending).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
import uuid
from pathlib import Path

import zmq

sys.path.insert(0, str(Path(__file__).parent))

import cip  # noqa: E402

KINDS = ["handle"] * 40 + ["lifecycle"] * 25 + ["resolve"] * 15 + ["confirm"] * 20
DELAY_MS = (500, 1500)
DEADLINE_MS = 6000
SWEEP_S = 0.25
DRAIN_S = 45.0
LAST_STATUS_S = 30.0


def read_key(path: str) -> bytes:
    """The Z85 key of a key file written by `concierge keygen` (`#` comment lines first)."""
    for line in Path(path).read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            return line.split()[0].encode()
    raise ValueError(f"no key in {path}")


class CurveClient(cip.Client):
    """cip.Client on a CURVE DEALER; accounting violations (4.1) are recorded instead of raised."""

    def __init__(self, endpoint: str, routing_id: bytes, server_key: bytes, secret_key: bytes):
        super().__init__(f"inproc://hosts-client-unused-{uuid.uuid4().hex}", routing_id=routing_id)
        self.socket.close(0)
        s = self.context.socket(zmq.DEALER)
        s.setsockopt(zmq.LINGER, 0)
        s.setsockopt(zmq.ROUTING_ID, routing_id)
        s.curve_serverkey = server_key
        s.curve_secretkey = secret_key
        s.curve_publickey = zmq.curve_public(secret_key)
        s.connect(endpoint)
        self.socket = s
        self.endpoint = endpoint
        self.violations: list[str] = []

    def _account(self, m: cip.Message) -> None:
        try:
            super()._account(m)
        except cip.ProtocolViolation as e:
            self.violations.append(str(e).splitlines()[0])


def emit(**event) -> None:
    sys.stdout.write(json.dumps(event) + "\n")
    sys.stdout.flush()


def worker_of(m: cip.Message) -> str | None:
    """The worker a message names: a progress body's `worker`, or a final's data (confirm and handle)."""
    body = m.json if isinstance(m.json, dict) else {}
    if m.status == "progress":
        return body.get("worker")
    if m.status == "final":
        part = body.get(m.phase)
        if isinstance(part, dict) and isinstance(part.get("data"), dict):
            return part["data"].get("worker")
    return None


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--broker", required=True)
    ap.add_argument("--server-key", required=True)
    ap.add_argument("--secret-key", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--window", type=int, default=20)
    ap.add_argument("--min-requests", type=int, default=300)
    ap.add_argument("--max-requests", type=int, default=600)
    ap.add_argument("--max-seconds", type=float, default=150.0)
    ap.add_argument("--seed", type=int, default=None)
    args = ap.parse_args()

    rng = random.Random(args.seed)
    server_key, secret_key = read_key(args.server_key), read_key(args.secret_key)
    tag = uuid.uuid4().hex[:6]
    clients = [CurveClient(args.broker, f"hosts-{tag}-c{i}".encode(), server_key, secret_key) for i in range(2)]
    problems: list[str] = []
    reqs: dict[bytes, dict] = {}
    open_rids: set[bytes] = set()

    # Both connections answer PING: the CURVE handshakes passed (the allowlist admitted this key).
    end = time.monotonic() + 30
    for c in clients:
        c.ping()
    waiting = set(range(len(clients)))
    while waiting:
        if time.monotonic() > end:
            emit(e="no-pong", clients=sorted(waiting))
            return 2
        for i in list(waiting):
            if clients[i]._receive_one(0.05) is not None:
                waiting.discard(i)
    emit(e="ready")

    def record(m: cip.Message, c: CurveClient) -> None:
        r = reqs.get(m.request_id)
        if r is None:
            if m.command != "PONG":
                problems.append(f"a message for an unknown request id: {m}")
            return
        entry = {"t": m.received_at, "status": m.status, "phase": m.phase, "code": m.code,
                 "worker": worker_of(m), "state": m.json.get("state") if m.status == "progress" else None,
                 "body": m.body.decode("utf-8", "replace")}
        if m.command == "REPLY":
            r["replies"].append(entry)
            if m.status != "progress":
                if r["ending"] is not None:
                    problems.append(f"{m.request_id!r}: a second ending REPLY {m}")
                else:
                    r["ending"] = entry
                    open_rids.discard(m.request_id)
                if m.status == "final" and entry["worker"]:
                    emit(e="final", worker=entry["worker"], t=m.received_at)
        elif r.get("last_round"):
            r["last_status"] = entry
        else:
            r["status"].append(entry)

    def pump(timeout_ms: int) -> None:
        poller = zmq.Poller()
        for c in clients:
            poller.register(c.socket, zmq.POLLIN)
        poller.register(0, zmq.POLLIN)
        events = dict(poller.poll(timeout_ms))
        for c in clients:
            if c.socket in events:
                while True:
                    try:
                        m = c._receive_one(0)
                    except cip.ProtocolViolation as e:
                        problems.append(str(e).splitlines()[0])
                        continue
                    if m is None:
                        break
                    record(m, c)
        if 0 in events:
            data = os.read(0, 4096)
            nonlocal stop_asked
            if not data or b"stop" in data:
                stop_asked = True

    counter = 0

    def send() -> None:
        nonlocal counter
        counter += 1
        ci = rng.randrange(len(clients))
        rid = f"h{tag}-{counter}".encode()
        kind = rng.choice(KINDS)
        delay_phase = kind if kind != "lifecycle" else rng.choice(["resolve", "confirm", "handle"])
        delay = rng.randint(*DELAY_MS)
        body = {"intent": {"type": "Echo", "parameters": {"text": rid.decode(), "delayMs": delay,
                                                            "delayPhase": delay_phase}}}
        reqs[rid] = {"rid": rid.decode(), "client": ci, "kind": kind, "delay_phase": delay_phase, "delay_ms": delay,
                     "sent_at": time.monotonic(), "replies": [], "status": [], "ending": None, "last_status": None}
        clients[ci].request("Echo", kind, body, deadline=DEADLINE_MS, rid=rid)
        open_rids.add(rid)
        if counter % 10 == 0:
            emit(e="sent", n=counter)

    stop_asked = False
    started = time.monotonic()
    next_sweep = started + SWEEP_S
    while True:
        now = time.monotonic()
        if counter >= args.max_requests or now - started > args.max_seconds:
            break
        if stop_asked and counter >= args.min_requests:
            break
        while len(open_rids) < args.window and counter < args.max_requests:
            send()
        if now >= next_sweep:
            next_sweep = now + SWEEP_S
            for rid in open_rids:
                clients[reqs[rid]["client"]].status(rid)
        pump(20)
    load_s = time.monotonic() - started

    drain_end = time.monotonic() + DRAIN_S
    while open_rids and time.monotonic() < drain_end:
        now = time.monotonic()
        if now >= next_sweep:
            next_sweep = now + SWEEP_S
            for rid in open_rids:
                clients[reqs[rid]["client"]].status(rid)
        pump(20)
    for rid in open_rids:
        problems.append(f"{rid!r} ({reqs[rid]['kind']}): no ending within {DRAIN_S} s of the end of the load")

    # Every request id once more: the stored ending must answer STATUS.
    end = time.monotonic() + 2.0  # STATUS answers still owed from the sweeps come first
    while any(c.owed_status.get(rid, 0) for c in clients for rid in reqs) and time.monotonic() < end:
        pump(20)
    for rid, r in reqs.items():
        r["last_round"] = True
        clients[r["client"]].status(rid)
    end = time.monotonic() + LAST_STATUS_S
    while any(r["last_status"] is None for r in reqs.values()) and time.monotonic() < end:
        pump(20)
    for rid, r in reqs.items():
        last, ending = r["last_status"], r["ending"]
        if last is None:
            problems.append(f"{rid!r}: no answer to the last STATUS within {LAST_STATUS_S} s")
        elif ending is not None and (last["status"], last["phase"], last["body"]) != (
                ending["status"], ending["phase"], ending["body"]):
            problems.append(f"{rid!r}: the last STATUS answer {last} differs from the ending {ending}")

    for c in clients:
        problems += [f"client {c.socket.getsockopt(zmq.ROUTING_ID)!r}: {v}" for v in c.violations]
        c.close()
    books = {"requests": list(reqs.values()), "problems": problems, "load_s": load_s, "sent": counter}
    Path(args.out).write_text(json.dumps(books))
    emit(e="done", sent=counter, problems=len(problems))
    return 0


if __name__ == "__main__":
    sys.exit(main())
