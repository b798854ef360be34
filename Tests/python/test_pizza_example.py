"""The template package (Examples/pizza-worker): a team's own intents and worker, built as a separate package that
depends on Concierge by path, run end to end under `concierge pool --executable`, over CURVE, with the pool's broker
endpoints, worker names and keys reaching the worker through its environment (WorkerMain); and as a first try, under
`concierge up --executable`.

Scripts/test builds the example before this suite; run alone, this module builds it (a few minutes the first time)."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest

import cip
import cluster

EXAMPLE = cip.REPO / "Examples" / "pizza-worker"
HB = 250


@pytest.fixture(scope="module")
def pizza_worker() -> Path:
    binary = Path(os.environ.get("PIZZA_WORKER_BIN", EXAMPLE / ".build" / "debug" / "pizza-worker"))
    if "PIZZA_WORKER_BIN" not in os.environ:
        build = subprocess.run(["swift", "build", "--package-path", str(EXAMPLE), "--product", "pizza-worker"],
                               capture_output=True, text=True, timeout=1800)
        assert build.returncode == 0, f"the example does not build:\n{build.stdout[-4000:]}\n{build.stderr[-4000:]}"
    assert binary.exists(), binary
    return binary


def keygen(directory: Path, name: str) -> tuple[Path, Path]:
    out = subprocess.run([str(cluster.binary()), "keygen", "--out", str(directory / name), "--comment", name],
                         capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    return directory / f"{name}.pub", directory / f"{name}.secret"


def test_the_example_runs_under_a_pool_over_curve_with_the_pools_endpoints_names_and_keys(spawn, run_dir,
                                                                                         pizza_worker):
    keys = run_dir / f"pizza-keys-{time.monotonic_ns()}"
    keys.mkdir()
    broker_pub, broker_secret = keygen(keys, "broker")
    worker_pub, worker_secret = keygen(keys, "workers")
    client_pub, client_secret = keygen(keys, "client")
    # wait=False: the plain PING of wait_ready gets no answer from a CURVE broker; the listing below waits instead.
    broker = spawn.broker(wait=False, heartbeat_ms=HB, curve_secret_key=broker_secret, worker_keys=worker_pub,
                          client_keys=client_pub)
    pool = cluster.Proc("pizza-pool", [
        str(cluster.binary()), "pool", "--broker", broker.backend, "--workers", "2", "--name-prefix", "pizza",
        "--control", f"ipc://{run_dir}/pizza-pool.ctl", "--heartbeat-ms", str(HB),
        "--curve-server-key", str(broker_pub), "--curve-secret-key", str(worker_secret),
        "--executable", str(pizza_worker), "--", "--heartbeat-ms", str(HB), "--capacity", "2"], run_dir)
    spawn.procs.append(pool)
    # Both workers register under the pool's names, over CURVE, announcing OrderPizza's definition (5.16). STATS
    # needs a worker key on a CURVE backend: ask with `concierge intents`, which takes the same keys.
    definition = json.loads((EXAMPLE / "Sources" / "PizzaIntents" / "Intents" / "OrderPizza.intent.json").read_text())
    end = time.monotonic() + 60
    listing = None
    while time.monotonic() < end:
        listing = subprocess.run(
            [str(cluster.binary()), "intents", "--broker", broker.backend, "--json",
             "--curve-server-key", str(broker_pub), "--curve-secret-key", str(worker_secret)],
            capture_output=True, text=True, timeout=30)
        if listing.returncode == 0 and json.loads(listing.stdout).get("OrderPizza"):
            served = json.loads(listing.stdout)["OrderPizza"]
            if len(served) == 1 and sorted(served[0]["workers"]) == ["pizza-0", "pizza-1"]:
                break
        time.sleep(0.2)
    else:
        pytest.fail(f"the pool's pizza workers did not register: {listing and listing.stdout + listing.stderr}\n"
                    f"{pool.tail()}")
    assert served[0]["definition"] == definition

    def send(phase: str, **parameters) -> dict:
        """`concierge send` over CURVE with a client key; its last JSON line (the ending)."""
        out = subprocess.run(
            [str(cluster.binary()), "send", "--broker", broker.frontend, "--phase", phase, "--deadline-ms", "10000",
             "--curve-server-key", str(broker_pub), "--curve-secret-key", str(client_secret),
             json.dumps({"type": "OrderPizza", "parameters": parameters})],
            capture_output=True, text=True, timeout=60)
        lines = [json.loads(line) for line in out.stdout.splitlines() if line.strip()]
        assert lines, f"no reply: {out.stderr}"
        return lines[-1]

    # A required parameter missing: the lifecycle stops at resolve asking for it.
    reply = send("lifecycle", address="5 Elm Street")
    assert (reply["status"], reply["phase"]) == ("final", "resolve"), reply
    assert reply["body"]["resolve"]["size"]["kind"] == "needsValue"
    # confirm without it ends missing-parameter before any handler code: no worker crashes.
    reply = send("confirm", address="5 Elm Street")
    assert reply["status"] == "error" and reply["body"]["code"] == "missing-parameter", reply
    assert reply["body"]["parameter"] == "size"
    # An address on a street two towns share: which one?
    reply = send("lifecycle", size="small", address="1 Main Street")
    assert reply["body"]["resolve"]["address"]["kind"] == "disambiguation", reply
    # The whole order.
    reply = send("lifecycle", size="large", toppings=["ham"], address="5 Elm Street")
    assert (reply["status"], reply["phase"]) == ("final", "handle"), reply
    assert reply["body"]["handle"]["code"] == "success"
    assert reply["body"]["handle"]["data"]["etaMinutes"] == 40
    assert "worker exited" not in pool.tail(200), pool.tail(200)


def test_up_runs_a_pool_of_the_example_and_converse_asks_in_the_definitions_order(spawn, run_dir, pizza_worker,
                                                                                 monkeypatch):
    """`concierge up --executable` is a first try in one process: a broker and a pool of the team's own worker (its
    arguments after `--`, the broker and its name through its environment). `concierge scale --status` finds that
    pool without `--control` (the control directory is the test's own). `send --converse` asks OrderPizza's missing
    parameters in the definition's order (size, then address; not alphabetically), so answers piped in, one a line,
    land on the parameters they were written for."""
    monkeypatch.setenv("CONCIERGE_RUNTIME_DIR", str(run_dir / "control"))
    frontend, backend = f"ipc://{run_dir}/up-fe", f"ipc://{run_dir}/up-be"
    up = cluster.Proc("pizza-up", [
        str(cluster.binary()), "up", "--frontend", frontend, "--backend", backend, "--workers", "2",
        "--name-prefix", "pizza", "--executable", str(pizza_worker), "--", "--capacity", "2"], run_dir)
    spawn.procs.append(up)
    end = time.monotonic() + 60
    served = None
    while time.monotonic() < end:
        listing = subprocess.run([str(cluster.binary()), "intents", "--broker", backend, "--json"],
                                 capture_output=True, text=True, timeout=30)
        served = json.loads(listing.stdout).get("OrderPizza") if listing.returncode == 0 else None
        if served and sorted(served[0]["workers"]) == ["pizza-0", "pizza-1"]:
            break
        time.sleep(0.2)
    else:
        pytest.fail(f"up's pizza workers did not register: {served}\n{up.tail()}")

    status = subprocess.run([str(cluster.binary()), "scale", "--status"], capture_output=True, text=True, timeout=30)
    assert status.returncode == 0, status.stderr
    pids = json.loads(status.stdout)["workers"].values()
    assert len(pids) == 2
    for pid in pids:
        assert Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[:3] == [
            str(pizza_worker).encode(), b"--capacity", b"2"]

    out = subprocess.run(
        [str(cluster.binary()), "send", "--broker", frontend, "--converse", "--deadline-ms", "10000",
         json.dumps({"type": "OrderPizza", "parameters": {}})],
        input="large\n5 Elm Street\n", capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stderr.index("size: needs a value") < out.stderr.index("address: needs a value"), out.stderr
    last = json.loads(out.stdout.splitlines()[-1])
    assert last["body"]["handle"]["code"] == "success", last
    assert last["body"]["handle"]["data"]["etaMinutes"] == 40
    assert last["body"]["intent"]["parameters"]["address"] == "5 Elm Street"
