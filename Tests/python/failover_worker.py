"""The durable worker (durable_worker.py: chaos_worker.py whose log lines carry the job's "ref") for the failover
test (test_failover.py), given EVERY broker endpoint and following the active broker.

`--broker` takes a comma-separated list. The worker is connected to one endpoint at a time; when the broker there
has been silent for liveness x interval (7.1: a dead process, a lost host, or a standby that has bound nothing yet),
it closes the socket, opens a new one with the same routing id on the NEXT endpoint and sends READY (the message
waits in the socket until that endpoint accepts the connection). DISCONNECT (5.10) re-registers on the same
endpoint: the broker there is alive and did not know the worker. Handlers of an old registration run to their end
and are logged, but their RESULTs are not sent (7.1). Everything else is chaos_worker.py's main loop, copied.

Each switch is logged to stderr as `switch <endpoint index> <endpoint> at <time.monotonic()>`.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from pathlib import Path

import zmq

sys.path.insert(0, str(Path(__file__).parent))

import chaos_worker  # noqa: E402
import durable_worker  # noqa: E402,F401  (installs its Log, whose lines carry "ref", into chaos_worker)

SIG = chaos_worker.SIG
LIVENESS = chaos_worker.LIVENESS
is_decimal = chaos_worker.is_decimal


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--broker", required=True, help="comma-separated backend endpoints")
    parser.add_argument("--name", required=True)
    parser.add_argument("--log", required=True)
    parser.add_argument("--types", default="Chaos")
    parser.add_argument("--capacity", type=int, default=2)
    parser.add_argument("--heartbeat-ms", type=int, default=1000)
    parser.add_argument("--max-ms", type=int, default=300)
    args = parser.parse_args()

    endpoints = args.broker.split(",")
    current = 0
    interval = args.heartbeat_ms / 1000.0
    name = args.name.encode()
    types = [t.encode() for t in args.types.split(",")]
    log = chaos_worker.Log(args.log, args.name)
    rng = random.Random()
    context = zmq.Context.instance()
    running: dict[bytes, dict] = {}
    generation = 0

    def connect() -> zmq.Socket:
        s = context.socket(zmq.DEALER)
        s.setsockopt(zmq.LINGER, 0)
        s.setsockopt(zmq.SNDHWM, 100000)  # never block a send while the endpoint is not connected
        s.setsockopt(zmq.ROUTING_ID, name)
        s.connect(endpoints[current])
        s.send_multipart([SIG, b"READY", str(args.capacity).encode(), name, *types])
        return s

    socket = connect()
    last_sent = last_heard = time.monotonic()

    def send(frames: list[bytes]) -> None:
        nonlocal last_sent
        socket.send_multipart(frames)
        last_sent = time.monotonic()

    def output(job: dict) -> bytes:
        obj = json.loads(job["body"])
        if job["phase"] == "handle":
            obj["handle"] = {"code": "success", "userActivity": {"activityType": obj["intent"]["type"], "userInfo": {}},
                             "data": {"key": job["key"].decode("utf-8", "replace"), "attempt": job["attempt"],
                                      "job": job["id"].hex(), "pid": os.getpid(),
                                      "worker": args.name}}
        elif job["phase"] == "confirm":
            obj["confirm"] = {"code": "ready"}
        else:
            obj["resolve"] = {}
        return json.dumps(obj, separators=(",", ":")).encode()

    while True:
        now = time.monotonic()
        for job_id in [j for j, job in running.items() if job["done_at"] <= now]:
            job = running.pop(job_id)
            live = job["socket_gen"] == generation
            if live:
                send([SIG, b"RESULT", job_id, b"stop" if job["phase"] == "handle" else b"continue", output(job)])
            if job["phase"] == "handle":
                log.write("end", job, None if live else "result-dropped")
        if now - last_sent >= interval:
            send([SIG, b"HEARTBEAT"])
        if now - last_heard > LIVENESS * interval:
            socket.close(0)  # 7.1: the broker is gone; the next endpoint, a new socket and READY
            generation += 1
            current = (current + 1) % len(endpoints)
            sys.stderr.write(f"switch {current} {endpoints[current]} at {time.monotonic():.3f}\n")
            sys.stderr.flush()
            socket = connect()
            last_sent = last_heard = time.monotonic()
            continue
        waits = [interval - (now - last_sent)] + [job["done_at"] - now for job in running.values()]
        timeout_ms = max(0, min(int(min(waits) * 1000) + 1, int(interval * 1000)))
        if not socket.poll(timeout_ms):
            continue
        frames = socket.recv_multipart()
        last_heard = time.monotonic()
        if len(frames) < 2 or frames[0] != SIG:
            continue
        command = frames[1]
        if command == b"DISCONNECT":
            socket.close(0)
            generation += 1
            socket = connect()
            last_sent = last_heard = time.monotonic()
            continue
        if command == b"CANCEL":
            if len(frames) == 3 and frames[2] in running and running[frames[2]]["socket_gen"] == generation:
                job = running.pop(frames[2])
                send([SIG, b"RESULT", job["id"], b"cancelled",
                      json.dumps({"code": "cancelled", "message": "stopped before doing anything"}).encode()])
                if job["phase"] == "handle":
                    log.write("end", job, "cancelled")
            continue
        if command != b"JOB":
            continue
        if len(frames) != 9 or len(frames[2]) != 8 or len(frames[7]) > 255 or not is_decimal(frames[8]) \
                or int(frames[8]) < 1:
            if len(frames) >= 3 and len(frames[2]) == 8:
                send([SIG, b"RESULT", frames[2], b"error",
                      json.dumps({"code": "malformed", "message": "unusable JOB"}).encode()])
            continue
        job_id, intent_type, phase, _left, body, key, attempt = frames[2:9]
        if phase not in (b"resolve", b"confirm", b"handle") or not body:
            send([SIG, b"RESULT", job_id, b"error", json.dumps({"code": "malformed", "message": "bad JOB"}).encode()])
            continue
        if intent_type not in types:
            send([SIG, b"RESULT", job_id, b"error",
                  json.dumps({"code": "unknown-intent", "message": "not served"}).encode()])
            continue
        job = {"id": job_id, "key": key, "attempt": int(attempt), "phase": phase.decode(), "body": body,
               "socket_gen": generation}
        if job["phase"] == "handle":
            log.write("start", job)  # on disk before the handler starts
        job["done_at"] = time.monotonic() + rng.uniform(0, args.max_ms / 1000.0)
        running[job_id] = job


if __name__ == "__main__":
    main()
