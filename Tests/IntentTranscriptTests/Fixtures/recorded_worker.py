#!/usr/bin/env python3
"""A CIPW01 worker (Schemas/PROTOCOL.md section 5) that answers each JOB with what a transcript recorded for the same
phase and input -- the handlers as they were when the conversation was recorded -- or, with --change-handle, with
handle.code "failure": a worker whose handler changed. Run by Tests/python/test_transcript_schema.py through
`concierge replay --worker`, which starts it with `--broker <endpoint>` first.

    recorded_worker.py --broker ipc:///tmp/x TRANSCRIPT [--change-handle]
"""

from __future__ import annotations

import argparse
import json
import os
import time

import zmq


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--broker", required=True)
    parser.add_argument("transcript")
    parser.add_argument("--change-handle", action="store_true")
    args = parser.parse_args()
    records = [json.loads(line) for line in open(args.transcript, encoding="utf-8") if line.strip()]
    start = records[0]
    phases = [r for r in records if r["record"] == "phase"]

    socket = zmq.Context.instance().socket(zmq.DEALER)
    socket.setsockopt(zmq.LINGER, 0)
    socket.setsockopt(zmq.IDENTITY, f"recorded-{os.getpid()}".encode())
    socket.connect(args.broker)
    socket.send_multipart([b"CIPW01", b"READY", b"1", f"recorded-{os.getpid()}".encode(),
                           start["intentType"].encode()])
    end = time.monotonic() + 60  # bounded: the replay stops it long before
    while time.monotonic() < end:
        if not socket.poll(1000):
            socket.send_multipart([b"CIPW01", b"HEARTBEAT"])
            continue
        frames = socket.recv_multipart()
        if frames[1] == b"DISCONNECT":
            return
        if frames[1] != b"JOB":
            continue
        job_id, phase, body = frames[2], frames[4].decode(), json.loads(frames[6])
        match = next((p for p in phases if p["phase"] == phase and p["input"] == body), None)
        if match is None:
            outcome, output = "error", {"code": "bad-body", "message": f"no {phase} with this input was recorded"}
        else:
            outcome, output = match["outcome"], match["output"]
            if args.change_handle and phase == "handle":
                output = {**output, "handle": {**output["handle"], "code": "failure"}}
        socket.send_multipart([b"CIPW01", b"RESULT", job_id, outcome.encode(), json.dumps(output).encode()])


if __name__ == "__main__":
    main()
