"""A CIPW02 worker process for the chaos test (test_chaos.py), written from Schemas/PROTOCOL.md (sections 5 and
5.13) alone, with pyzmq and the standard library only.

It registers with `CIPW02 READY`, heartbeats once per interval (7.1), and runs every JOB with a simulated handler
that takes a random 0..max-ms milliseconds. For a handle job it appends a "start" line to the shared log -- in one
write(2) on a file opened with O_APPEND, then fsync -- BEFORE the handler starts, and an "end" line after the RESULT
has been sent (or after the handler stopped, when the RESULT is not sent). Lines are JSON objects:

    {"event": "start" | "end", "key", "attempt", "job" (hex), "pid", "worker", "t" (time.monotonic()), "how"?}

time.monotonic() is CLOCK_MONOTONIC, one clock for every process of the machine, so the test can compare the lines
of different workers and its own kill times. A handler that is cancelled (CANCEL, 5.13) stops at once and is
answered `cancelled`. On DISCONNECT, or when the broker has been silent for liveness x interval, the worker opens a
new socket and registers again (5.10, 7.1); the handlers of the old registration run to their end (a real handler
cannot be stopped from outside), but their RESULTs are not sent (7.1: SHOULD NOT).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import time

import zmq

SIG = b"CIPW02"
LIVENESS = 3


def is_decimal(frame: bytes) -> bool:
    return 1 <= len(frame) <= 9 and all(0x30 <= b <= 0x39 for b in frame)


class Log:
    def __init__(self, path: str, name: str):
        self.fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        self.name = name

    def write(self, event: str, job: dict, how: str | None = None) -> None:
        line = {"event": event, "key": job["key"].decode("utf-8", "replace"), "attempt": job["attempt"],
                "job": job["id"].hex(), "pid": os.getpid(), "worker": self.name, "t": time.monotonic()}
        if how:
            line["how"] = how
        os.write(self.fd, (json.dumps(line) + "\n").encode())
        os.fsync(self.fd)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--broker", required=True)
    parser.add_argument("--name", required=True)
    parser.add_argument("--log", required=True)
    parser.add_argument("--types", default="Chaos")
    parser.add_argument("--capacity", type=int, default=2)
    parser.add_argument("--heartbeat-ms", type=int, default=1000)
    parser.add_argument("--max-ms", type=int, default=300)
    # Fault injection, to see the chaos test fail: with this probability a handle job blocks the whole worker (no
    # heartbeats, nothing read) for stall-ms while its handler runs, so that the broker declares a live worker dead.
    parser.add_argument("--stall-probability", type=float, default=0.0)
    parser.add_argument("--stall-ms", type=int, default=0)
    args = parser.parse_args()

    interval = args.heartbeat_ms / 1000.0
    name = args.name.encode()
    types = [t.encode() for t in args.types.split(",")]
    log = Log(args.log, args.name)
    rng = random.Random()
    context = zmq.Context.instance()
    # job id -> {"id", "key", "attempt", "phase", "body", "done_at", "socket_gen"}; one dict across registrations:
    # the handlers of an old registration keep running (and logging) but their RESULTs are not sent.
    running: dict[bytes, dict] = {}
    generation = 0

    def connect() -> zmq.Socket:
        s = context.socket(zmq.DEALER)
        s.setsockopt(zmq.LINGER, 0)
        s.setsockopt(zmq.ROUTING_ID, name)
        s.connect(args.broker)
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
                                      "job": job["id"].hex(), "pid": os.getpid(), "worker": args.name}}
        elif job["phase"] == "confirm":
            obj["confirm"] = {"code": "ready"}
        else:
            obj["resolve"] = {}
        return json.dumps(obj, separators=(",", ":")).encode()

    while True:
        now = time.monotonic()
        # Handlers that are done: RESULT (if the registration still stands), then the "end" line.
        for job_id in [j for j, job in running.items() if job["done_at"] <= now]:
            job = running.pop(job_id)
            current = job["socket_gen"] == generation
            if current:
                send([SIG, b"RESULT", job_id, b"stop" if job["phase"] == "handle" else b"continue", output(job)])
            if job["phase"] == "handle":
                log.write("end", job, None if current else "result-dropped")
        if now - last_sent >= interval:
            send([SIG, b"HEARTBEAT"])
        if now - last_heard > LIVENESS * interval:
            socket.close(0)  # 7.1: the broker is gone; a new socket and READY (a short wait is enough here)
            generation += 1
            time.sleep(0.25)
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
            continue  # W1: ignore
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
            continue  # a CANCEL for a job answered already, or unknown: ignored (5.13)
        if command != b"JOB":
            continue  # HEARTBEAT, DRAIN, ERROR: nothing to do
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
            if args.stall_ms and rng.random() < args.stall_probability:
                time.sleep(args.stall_ms / 1000.0)
        job["done_at"] = time.monotonic() + rng.uniform(0, args.max_ms / 1000.0)
        running[job_id] = job


if __name__ == "__main__":
    main()
