"""Identities kept apart behind one gateway (issue 46, point 3; PROTOCOL.md section 3.4, Docs/PERMISSIONS.md "The HTTP
gateway"): with `--tokens`, each token identity's broker connection has the routing id `scope:NAME/gateway-...`, a
scope of its own within the gateway's key. Real processes: a broker (with CURVE, where every identity shares the
gateway's key, and without), a pool of example workers, and a gateway with two identities, alice and bob.

What is checked: bob cannot read alice's conversation (404 `unknown-conversation`), cannot cancel her request (404
`unknown-request`, answered at once, her request runs on), and the same idempotency key is two keys; alice keeps
all of hers. Without the gateway: raw clients with scoped routing ids keep one key's idempotency keys apart at the
broker itself, and a malformed scope is no scope. A tokens file whose identity cannot name a scope stops the
gateway at start."""

from __future__ import annotations

import contextlib
import subprocess
import time

import httpx
import pytest

import cip
import cluster
from gateway_procs import Gateway, echo, stack

ALICE_TOKEN = "alice-token-0123456789"
BOB_TOKEN = "bob-token-0123456789abc"
MESSAGE = {"intent": {"type": "SendMessage", "parameters": {"recipient": {"displayName": "John"}, "content": "Hi"}}}


def problem(response: httpx.Response, status: int, code: str) -> dict:
    assert response.status_code == status, response.text
    body = response.json()
    assert body["code"] == code, body
    return body


def keygen(directory, name: str):
    """A CURVE key pair from `concierge keygen`: (public key file, secret key file)."""
    subprocess.run([str(cluster.binary()), "keygen", "--out", str(directory / name)], check=True,
                   capture_output=True, timeout=20)
    return directory / f"{name}.pub", directory / f"{name}.secret"


@pytest.fixture(scope="module")
def tokens(tmp_path_factory):
    path = tmp_path_factory.mktemp("identities") / "tokens"
    path.write_text(f"alice {ALICE_TOKEN}\nbob {BOB_TOKEN}\n")
    return path


@contextlib.contextmanager
def callers(gateway: Gateway):
    """HTTP clients for alice and bob (short timeouts: an answer that never comes fails the test, not the run)."""
    alice = httpx.Client(base_url=gateway.url, timeout=10, headers={"Authorization": f"Bearer {ALICE_TOKEN}"})
    bob = httpx.Client(base_url=gateway.url, timeout=10, headers={"Authorization": f"Bearer {BOB_TOKEN}"})
    with alice, bob:
        yield alice, bob


@pytest.fixture(scope="module")
def curve_gateway(run_dir, tmp_path_factory, tokens):
    """A CURVE broker, a pool of two example workers over CURVE, and a gateway with the tokens: every identity
    reaches the broker with the gateway's one key."""
    keys = tmp_path_factory.mktemp("identity-keys")
    broker_pub, broker_secret = keygen(keys, "broker")
    worker_pub, worker_secret = keygen(keys, "worker")
    gateway_pub, gateway_secret = keygen(keys, "gateway")
    broker = cluster.Broker("gwidb", run_dir, {"curve-secret-key": broker_secret, "client-keys": gateway_pub,
                                                "worker-keys": worker_pub, "startup-grace-ms": 100})
    pool = gateway = None
    try:
        pool = cluster.Proc("gwidpool", [
            str(cluster.binary()), "pool", "--broker", broker.backend, "--workers", "2",
            "--control", f"ipc://{run_dir}/gwidpool.ctl", "--capacity", "16", "--log-level", "warning",
            "--curve-server-key", str(broker_pub), "--curve-secret-key", str(worker_secret)], run_dir)
        gateway = Gateway("gwid", run_dir, broker.frontend, "--tokens", str(tokens), "--curve-server-key",
                          str(broker_pub), "--curve-secret-key", str(gateway_secret)).wait_ready()
        # The workers may still be registering: an Echo through the gateway until one answers.
        with httpx.Client(base_url=gateway.url, timeout=10, headers={"Authorization": f"Bearer {ALICE_TOKEN}"}) as h:
            end = time.monotonic() + 30
            while (r := h.post("/v1/requests", json=echo("ready"))).status_code != 200:
                assert time.monotonic() < end, f"no worker over CURVE: {r.text}\n{pool.tail()}"
                time.sleep(0.1)
        yield gateway
    finally:
        for proc in (gateway, pool, broker):
            if proc is not None:
                proc.stop()


@pytest.fixture(scope="module")
def plain_gateway(run_dir, tokens):
    """A broker without CURVE, a pool and a gateway with the tokens."""
    with stack(run_dir, "gwidplain", "--tokens", str(tokens)) as gateway:
        yield gateway


def test_with_curve_one_identity_cannot_read_anothers_conversation(curve_gateway):
    with callers(curve_gateway) as (alice, bob):
        started = alice.post("/v1/conversations", json=MESSAGE)
        assert started.status_code == 201, started.text
        cid = started.headers["conversation-id"]
        problem(bob.get(f"/v1/conversations/{cid}"), 404, "unknown-conversation")
        problem(bob.delete(f"/v1/conversations/{cid}"), 404, "unknown-conversation")
        mine = alice.get(f"/v1/conversations/{cid}")
        assert mine.status_code == 200 and mine.json()["state"] == "asking", mine.text
        # Bob may use the same conversation id: his own conversation.
        theirs = bob.post("/v1/conversations", headers={"Conversation-Id": cid}, json=MESSAGE)
        assert theirs.status_code == 201 and theirs.headers["conversation-id"] == cid, theirs.text
        assert alice.get(f"/v1/conversations/{cid}").json()["turn"] == 1


def test_with_curve_one_identity_cannot_cancel_anothers_request(curve_gateway):
    with callers(curve_gateway) as (alice, bob):
        r = alice.post("/v1/requests", params={"deadline_ms": 20}, json=echo("slow", delayMs=4000))
        assert r.status_code == 202, r.text
        location = r.headers["location"]
        # Answered at once (before: the broker found alice's request by the shared key, cancelled it, and bob's
        # DELETE waited for an answer that never came).
        start = time.monotonic()
        problem(bob.delete(location, timeout=5), 404, "unknown-request")
        assert time.monotonic() - start < 5
        problem(bob.get(location, timeout=5), 404, "unknown-request")
        # Her request runs on: STATUS through GET still answers her.
        running = alice.get(location)
        assert running.status_code == 202 and running.json()["state"] == "running", running.text
        problem(alice.delete(location), 409, "cancelled")


def test_with_curve_the_same_idempotency_key_is_two_keys(curve_gateway):
    with callers(curve_gateway) as (alice, bob):
        key = {"Idempotency-Key": f"shared-{time.monotonic_ns()}"}
        first = alice.post("/v1/requests", headers=key, json=echo("alice"))
        assert first.status_code == 200 and "idempotent-replayed" not in first.headers, first.text
        second = bob.post("/v1/requests", headers=key, json=echo("bob"))
        assert second.status_code == 200 and "idempotent-replayed" not in second.headers, second.text
        assert second.json()["handle"]["data"]["text"] == "bob"
        again = alice.post("/v1/requests", headers=key, json=echo("alice"))
        assert again.status_code == 200 and again.headers["idempotent-replayed"] == "true"


def test_without_curve_one_identity_cannot_read_or_cancel_anothers(plain_gateway):
    with callers(plain_gateway) as (alice, bob):
        started = alice.post("/v1/conversations", json=MESSAGE)
        assert started.status_code == 201, started.text
        cid = started.headers["conversation-id"]
        problem(bob.get(f"/v1/conversations/{cid}"), 404, "unknown-conversation")
        assert alice.get(f"/v1/conversations/{cid}").json()["state"] == "asking"
        r = alice.post("/v1/requests", params={"deadline_ms": 20}, json=echo("slow", delayMs=2000))
        assert r.status_code == 202, r.text
        problem(bob.delete(r.headers["location"], timeout=5), 404, "unknown-request")
        assert alice.get(r.headers["location"]).status_code == 202
        key = {"Idempotency-Key": f"shared-{time.monotonic_ns()}"}
        assert alice.post("/v1/requests", headers=key, json=echo("alice")).status_code == 200
        assert bob.post("/v1/requests", headers=key, json=echo("bob")).status_code == 200


def test_scoped_routing_ids_keep_one_keys_idempotency_keys_apart_at_the_broker(plain_gateway):
    """Without the gateway (which also puts the identity in front of a key): raw CIPC02 clients of the broker. Two
    scopes use one key with two bodies and both run; a routing id with a malformed scope is in the key's own scope,
    shared with a client that names none, so its other body is a conflict there."""
    key = f"raw-{time.monotonic_ns()}"
    unique = time.monotonic_ns()
    routing = {"a": f"scope:a/{unique}", "b": f"scope:b/{unique}", "plain": f"plain-{unique}",
               "malformed": f"scope:bad name/{unique}"}
    clients = {name: cip.Client(plain_gateway.frontend, routing_id=rid.encode(), version=2)
               for name, rid in routing.items()}
    try:
        def send(name: str, text: str) -> cip.Message:
            c = clients[name]
            return c.replies(c.request("Echo", "handle", cip.interaction("Echo", text=text), key=key))[-1]

        assert send("a", "from a").status == "final"
        assert send("b", "from b").status == "final"
        assert send("plain", "from plain").status == "final"
        assert send("malformed", "from malformed").code == "idempotency-conflict"
        replayed = send("a", "from a")
        assert replayed.status == "final" and replayed.flags == b"replay"
    finally:
        for c in clients.values():
            c.close()


def test_an_identity_that_cannot_name_a_scope_stops_the_gateway(plain_gateway, tmp_path):
    bad = tmp_path / "tokens"
    bad.write_text(f"alice {ALICE_TOKEN}\nbob@example {BOB_TOKEN}\n")
    out = subprocess.run([str(cluster.binary()), "gateway", "--broker", plain_gateway.frontend, "--listen",
                          "127.0.0.1:0", "--tokens", str(bad)], capture_output=True, text=True, timeout=60)
    assert out.returncode != 0 and "line 2" in out.stderr and "IDENTITY" in out.stderr, out.stderr
