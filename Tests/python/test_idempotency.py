"""CIPC02 (Docs/IDEMPOTENCY.md) against the real broker, from the design alone: a REQUEST with an
idempotency key in F7; REPLY and STATUS answers with flags in F6. A duplicate in flight attaches to the first
request, a completed key replays its final reply byte for byte flagged `replay`, another body is
`idempotency-conflict`, and CIPC01 clients are unaffected."""

from __future__ import annotations

import json
import sys
import time
import uuid
from concurrent.futures import ThreadPoolExecutor

import zmq

import cip

sys.path.insert(0, str(cip.REPO / "Clients" / "python" / "src"))
from concierge_client import Client  # noqa: E402  (the library where a test is about the broker, not the wire)

V2 = b"CIPC02"


def body(**parameters):
    parameters.setdefault("text", "pay")
    return json.dumps({"intent": {"type": "Echo", "parameters": parameters}}).encode()


class V2Client:
    def __init__(self, endpoint: str):
        self.socket = zmq.Context.instance().socket(zmq.DEALER)
        self.socket.setsockopt(zmq.LINGER, 0)
        self.socket.connect(endpoint)
        self.inbox: list[list[bytes]] = []

    def request(self, rid: bytes, key: bytes, payload: bytes, phase: bytes = b"handle", deadline: bytes = b"10000"):
        self.socket.send_multipart([V2, b"REQUEST", rid, b"Echo", phase, deadline, payload, key])

    def receive(self, timeout: float = 20.0) -> list[bytes]:
        assert self.socket.poll(int(timeout * 1000)), "no answer from the broker"
        return self.socket.recv_multipart()

    def ending(self, rid: bytes, timeout: float = 20.0) -> list[bytes]:
        """The final or error REPLY for rid (progress replies are skipped); every answer has the 7 frames of v2."""
        end = time.monotonic() + timeout
        while True:
            for frames in self.inbox:
                if frames[1] == b"REPLY" and frames[2] == rid and frames[3] != b"progress":
                    self.inbox.remove(frames)
                    return frames
            frames = self.receive(max(0.01, end - time.monotonic()))
            assert frames[0] == V2 and len(frames) == 7, frames
            self.inbox.append(frames)

    def close(self):
        self.socket.close()


def new_key() -> bytes:
    return uuid.uuid4().hex.encode()


def test_a_duplicate_in_flight_attaches_and_gets_the_same_final_reply(main_cluster):
    key = new_key().decode()
    intent = {"type": "Echo", "parameters": {"text": "pay", "delayMs": 300}}
    with Client(main_cluster.frontend) as c, ThreadPoolExecutor(2) as pool:
        calls = [pool.submit(c.request, intent, "handle", 10.0, key, timeout=20) for _ in range(2)]
        first, second = (call.result(25) for call in calls)
    assert first.status == second.status == "final"
    # One job: the same handler output (its pid, handler instance and job count) byte for byte.
    assert first.body == second.body
    assert not first.is_replay and not second.is_replay  # attached, not replayed


def test_a_completed_key_is_replayed_byte_for_byte_and_another_body_is_a_conflict(main_cluster):
    c = V2Client(main_cluster.frontend)
    key = new_key()
    c.request(b"pay-1", key, body(text="pay 5"))
    original = c.ending(b"pay-1")
    assert original[3] == b"final" and original[6] == b""
    c.request(b"pay-2", key, body(text="pay 5"))
    replay = c.ending(b"pay-2")
    assert (replay[3], replay[4], replay[5], replay[6]) == (b"final", original[4], original[5], b"replay")
    c.request(b"pay-3", key, body(text="pay 50"))
    conflict = c.ending(b"pay-3")
    assert conflict[3] == b"error"
    assert json.loads(conflict[5])["code"] == "idempotency-conflict"
    # STATUS of the replayed request answers with its stored reply, in version 02 too.
    c.socket.send_multipart([V2, b"STATUS", b"pay-2"])
    status = c.receive()
    assert (status[0], status[1], status[3], status[5]) == (V2, b"STATUS", b"final", original[5])
    c.close()


def test_resolve_ignores_keys(main_cluster):
    c = V2Client(main_cluster.frontend)
    key = new_key()
    c.request(b"r-1", key, body(), phase=b"resolve")
    c.request(b"r-2", key, body(), phase=b"resolve")
    assert c.ending(b"r-1")[6] == b"" and c.ending(b"r-2")[6] == b""
    c.close()


def test_version_02_answers_carry_its_signature_and_bad_frames_are_malformed(main_cluster):
    c = V2Client(main_cluster.frontend)
    c.socket.send_multipart([V2, b"PING"])
    assert c.receive() == [V2, b"PONG"]
    # A version-02 REQUEST without F7, and one with a key over 255 bytes.
    c.socket.send_multipart([V2, b"REQUEST", b"short", b"Echo", b"handle", b"", body()])
    c.socket.send_multipart([V2, b"REQUEST", b"long", b"Echo", b"handle", b"", body(), b"k" * 256])
    for rid in (b"short", b"long"):
        answer = c.ending(rid)
        assert answer[3] == b"error" and json.loads(answer[5])["code"] == "malformed", answer
    c.close()


def test_an_empty_key_is_no_key(main_cluster):
    c = V2Client(main_cluster.frontend)
    c.request(b"n-1", b"", body(text="same"))
    c.request(b"n-2", b"", body(text="same"))
    one, two = c.ending(b"n-1"), c.ending(b"n-2")
    assert one[6] == two[6] == b""
    assert one[5] != two[5]  # two jobs: their handler instances differ
    c.close()


def test_past_the_record_bound_the_oldest_key_is_forgotten(spawn):
    """--max-idempotency-records 1: a second completed key pushes the first out, so the first runs again."""
    broker = spawn.broker(max_idempotency_records=1)
    spawn.worker(broker)
    c = V2Client(broker.frontend)
    first, second = new_key(), new_key()
    c.request(b"a-1", first, body(text="a"))
    original = c.ending(b"a-1")
    c.request(b"a-2", first, body(text="a"))
    assert c.ending(b"a-2")[6] == b"replay"  # still kept
    c.request(b"b-1", second, body(text="b"))
    assert c.ending(b"b-1")[3] == b"final"
    c.request(b"a-3", first, body(text="a"))
    again = c.ending(b"a-3")
    assert again[3] == b"final" and again[6] == b"" and again[5] != original[5]  # ran again
    c.close()
