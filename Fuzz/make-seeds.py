#!/usr/bin/env python3
"""Writes the seed corpora of the fuzz targets (Fuzz/corpus/<target>/) from the examples of Schemas/PROTOCOL.md
(sections 11 and 12) and the definition files in Schemas/intents. Run it again after changing an example; the output
is committed. The encodings are those of Fuzz/README.md."""
import json
import os
import shutil
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def b(x):
    if isinstance(x, bytes):
        return x
    if isinstance(x, str):
        return x.encode()
    return json.dumps(x, separators=(",", ":"), ensure_ascii=False).encode()


def message(options, frames):
    out = bytes([options, len(frames)])
    for f in frames:
        f = b(f)
        out += struct.pack(">H", len(f)) + f
    return out


def write(target, name, data):
    path = os.path.join(HERE, "corpus", target)
    os.makedirs(path, exist_ok=True)
    with open(os.path.join(path, name), "wb") as f:
        f.write(data)


# Bodies from section 12.
sm1 = {"intent": {"type": "SendMessage", "parameters": {"recipient": {"displayName": "John"}, "content": "Running 5 minutes late"}}}
john = {"displayName": "John Appleseed", "handle": "john.appleseed@example.com", "handleType": "emailAddress", "customIdentifier": "contact-john-appleseed"}
doe = {"displayName": "John Doe", "handle": "+1 415 555 0102", "handleType": "phoneNumber", "customIdentifier": "contact-john-doe"}
sm1_result = dict(sm1, resolve={
    "recipient": {"kind": "disambiguation", "options": [john, doe]},
    "content": {"kind": "success", "value": "Running 5 minutes late"},
    "attachments": {"kind": "notRequired"}})
sm2 = {"intent": {"type": "SendMessage", "parameters": {"recipient": john, "content": "Running 5 minutes late"}}}
sm2_resolved = dict(sm2, resolve={
    "recipient": {"kind": "success", "value": john},
    "content": {"kind": "success", "value": "Running 5 minutes late"},
    "attachments": {"kind": "notRequired"}})
sm2_confirmed = dict(sm2_resolved, confirm={"code": "ready"})
sm2_handled = dict(sm2_confirmed, handle={
    "code": "success",
    "userActivity": {"activityType": "SendMessage", "userInfo": {"interaction": {
        "intent": sm2["intent"], "response": {"code": "success", "data": {"messageId": "msg-1", "recipient": "contact-john-appleseed"}}}}},
    "data": {"messageId": "msg-1", "recipient": "contact-john-appleseed"}})
anna = {"displayName": "Anna Schmidt", "handle": "+49 30 5550101", "handleType": "phoneNumber", "customIdentifier": "contact-anna"}
sp1 = {"intent": {"type": "SendPayment", "parameters": {"payee": {"displayName": "Anna"}, "currencyAmount": {"amount": "5000", "currencyCode": "EUR"}}}}
sp1_final = {"intent": {"type": "SendPayment", "parameters": {"payee": anna, "currencyAmount": {"amount": "5000", "currencyCode": "EUR"}}},
             "resolve": {"payee": {"kind": "success", "value": anna}, "currencyAmount": {"kind": "success", "value": {"amount": "5000", "currencyCode": "EUR"}}, "note": {"kind": "notRequired"}},
             "confirm": {"code": "failureInsufficientFunds", "message": "the account holds 2500 EUR"}}
echo = {"intent": {"type": "Echo", "parameters": {"text": "hello", "delayMs": 1200}}}
echo_bad = {"intent": {"type": "Echo", "parameters": {"text": 5}}}
ride = {"intent": {"type": "RequestRide", "identifier": "ride-2026-11-22-001", "parameters": {"dropOffLocation": {"name": "SFO"}, "partySize": 2}}}
workout = {"intent": {"type": "StartWorkout", "parameters": {"workoutName": "yoga", "isOpenEnded": True}}}
probe = {"intent": {"type": "FuzzProbe", "identifier": "p", "parameters": {
    "text": "t", "count": 2, "ratio": 0.5, "flag": True, "when": "2026-11-22T10:00:00.250+01:00",
    "components": {"year": 2026, "month": 11, "day": 23, "hour": 7, "minute": 45, "timeZone": "America/Los_Angeles"},
    "price": {"amount": "12.50", "currencyCode": "EUR"}, "who": john, "place": {"name": "Ferry Building", "latitude": 37.7955, "longitude": -122.3937},
    "level": "high", "tags": ["a", "b"], "levels": ["low"], "days": ["2026-11-22T10:00:00Z"], "people": [doe], "prices": [{"amount": "-1", "currencyCode": "USD"}]}}}
error_body = {"code": "bad-deadline", "message": "deadline must be a decimal number of milliseconds from 10 to 60000"}
progress = {"elapsed_ms": 500, "phase": "handle", "state": "running", "worker": "worker-4711"}
interactions = [sm1, sm1_result, sm2, sm2_resolved, sm2_confirmed, sm2_handled, sp1, sp1_final, echo, echo_bad, ride, workout, probe]

for target in ("ClientFrames", "WorkerFrames", "JobFrames", "JSONValue", "IntentBody", "WireBody"):
    shutil.rmtree(os.path.join(HERE, "corpus", target), ignore_errors=True)

# ClientFrames: [options][count][len16 frame]...
TP = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"  # a W3C traceparent (CIPC04, CIPW05)
C = "CIPC01"
client = {
    "request-12.2": [C, "REQUEST", "m-1", "SendMessage", "lifecycle", "", sm1],
    "request-12.3": [C, "REQUEST", "m-2", "SendMessage", "lifecycle", "", sm2],
    "request-12.4": [C, "REQUEST", "p-1", "SendPayment", "lifecycle", "5000", sp1],
    "request-12.5": [C, "REQUEST", "e-1", "Echo", "handle", "500", echo],
    "request-12.6-bad-deadline": [C, "REQUEST", "x-1", "Echo", "handle", "5", {"intent": {"type": "Echo", "parameters": {"text": "hi"}}}],
    "request-12.6-bad-body": [C, "REQUEST", "x-2", "Echo", "lifecycle", "", echo_bad],
    "request-resolve-confirm": [C, "REQUEST", "r", "RequestRide", "confirm", "0060000", ride],
    "status-12.5": [C, "STATUS", "e-1"],
    "status-12.6-unknown": [C, "STATUS", "never-sent"],
    "status-malformed": [C, "STATUS", "s", "extra"],
    "ping": [C, "PING"],
    "ping-12.6-other-version": ["CIPC09", "PING"],
    "one-frame": [C],
    "unknown-command": [C, "FROB", "r2"],
    "request-six-frames": [C, "REQUEST", "r3", "Echo", "handle", ""],
    "request-empty-id": [C, "REQUEST", "", "Echo", "handle", "", echo],
    "request-bad-phase": [C, "REQUEST", "r4", "Echo", "dance", "", echo],
    "request-deadline-not-decimal": [C, "REQUEST", "r5", "Echo", "handle", "soon", echo],
    "request-empty-body": [C, "REQUEST", "r7", "Echo", "handle", "", ""],
    "request-type-not-utf8": [C, "REQUEST", "r8", b"Ech\xff", "handle", "", echo],
    "request-v2-key": ["CIPC02", "REQUEST", "k-1", "SendPayment", "handle", "", sp1, "7f3a-pay-42"],
    "request-v2-no-key": ["CIPC02", "REQUEST", "k-2", "Echo", "handle", "", echo, ""],
    "request-v2-seven-frames": ["CIPC02", "REQUEST", "k-3", "Echo", "handle", "", echo],
    "ping-v2": ["CIPC02", "PING"],
    "cancel-v2": ["CIPC02", "CANCEL", "k-1"],
    "cancel-v2-no-id": ["CIPC02", "CANCEL"],
    "cancel-v1": ["CIPC01", "CANCEL", "k-1"],
    "request-v4-traced": ["CIPC04", "REQUEST", "t-1", "Echo", "lifecycle", "", echo, "", TP, "vendor=opaque"],
    "request-v4-untraced": ["CIPC04", "REQUEST", "t-2", "Echo", "handle", "", echo, "k", "", ""],
    "request-v4-bad-parent": ["CIPC04", "REQUEST", "t-3", "Echo", "handle", "", echo, "", TP.upper(), ""],
    "request-v4-state-alone": ["CIPC04", "REQUEST", "t-4", "Echo", "handle", "", echo, "", "", "a=b"],
    "request-v4-later-version": ["CIPC04", "REQUEST", "t-5", "Echo", "handle", "", echo, "", "cc" + TP[2:] + "-x", ""],
    "turn-v4-traced": ["CIPC04", "TURN", "t-6", "c-1", "1", "", sm1, "record", TP, ""],
    "request-definition-version": [C, "REQUEST", "v-1", "Echo@2", "lifecycle", "", echo],  # 5.18: F3 Type@N
    "request-not-a-version": [C, "REQUEST", "v-2", "Echo@02", "lifecycle", "", echo],
}
for name, frames in client.items():
    write("ClientFrames", name, message(0, frames))
write("ClientFrames", "small-limits-too-large", message(1, [C, "REQUEST", "big", "Echo", "handle", "999", echo]))
write("ClientFrames", "too-many-frames", message(0, [C, "PING"] + [""] * 70))
write("ClientFrames", "dropped-frames", message(2, [C, "STATUS", "s"]))

# WorkerFrames: options bit 0 = registered.
W = "CIPW01"
job = lambda n: struct.pack("<Q", n)


def packed(n, intent_type, phase, last, time_left, attempt, key, trace=None):
    """A CIPW06 JOB header (PROTOCOL.md 5.17): job id, phase, last phase, time left (u64), attempt (u32), then the
    intent type and the key each after a length byte, then (traced only) traceparent and tracestate each after a
    two-byte length; little-endian."""
    t, k = intent_type.encode(), key.encode()
    header = job(n) + bytes([phase, last]) + struct.pack("<QI", time_left, attempt)
    header += bytes([len(t)]) + t + bytes([len(k)]) + k
    if trace is not None:
        parent, state = trace[0].encode(), trace[1].encode()
        header += struct.pack("<H", len(parent)) + parent + struct.pack("<H", len(state)) + state
    return header
worker = {
    "ready-12.1": (0, [W, "READY", "16", "worker-4711", "Echo", "RequestRide", "SendMessage", "SendPayment", "StartWorkout"]),
    "ready-again": (1, [W, "READY", "0001", "w", "Echo", "Echo"]),
    "ready-12.6-malformed": (0, [W, "READY", "many", "rogue", "Echo"]),
    "ready-zero-name": (0, [W, "READY", "1", b"\x00w", "Echo"]),
    "heartbeat": (1, [W, "HEARTBEAT"]),
    "heartbeat-12.6-unregistered": (0, [W, "HEARTBEAT"]),
    "result-12.2-stop": (1, [W, "RESULT", job(1), "stop", sm1_result]),
    "result-12.3-continue": (1, [W, "RESULT", job(2), "continue", sm2_resolved]),
    "result-12.6-error": (1, [W, "RESULT", job(6), "error", {"code": "bad-body", "message": "parameter \"text\" (string): expected string, got integer"}]),
    "result-unregistered": (0, [W, "RESULT", "12345678", "stop", "{}"]),
    "result-short-id": (1, [W, "RESULT", "1234567", "stop", "{}"]),
    "drain-12.7": (1, [W, "DRAIN"]),
    "disconnect-12.7": (1, [W, "DISCONNECT"]),
    "disconnect-unregistered": (0, [W, "DISCONNECT"]),
    "unknown-command": (1, [W, "FROB"]),
    "other-version": (1, ["CIPW09", "READY", "1", "rogue", "Echo"]),
    "ready-v2": (0, ["CIPW02", "READY", "4", "worker-v2", "Echo", "SendPayment"]),
    "result-v2-cancelled": (1, ["CIPW02", "RESULT", job(10), "cancelled", {"code": "cancelled", "message": "the handler stopped: the job was cancelled"}]),
}
for name, (options, frames) in worker.items():
    write("WorkerFrames", name, message(options, frames))

# JobFrames: broker -> worker.
jobs = {
    "job-12.2-resolve": [W, "JOB", job(1), "SendMessage", "resolve", "2999", sm1],
    "job-12.3-confirm": [W, "JOB", job(3), "SendMessage", "confirm", "2997", sm2_resolved],
    "job-12.3-handle": [W, "JOB", job(4), "SendMessage", "handle", "2995", sm2_confirmed],
    "job-12.5-handle": [W, "JOB", job(5), "Echo", "handle", "500", echo],
    "job-12.6-bad-body": [W, "JOB", job(6), "Echo", "resolve", "3000", echo_bad],
    "job-deadline-passed": [W, "JOB", job(7), "RequestRide", "resolve", "0", ride],
    "job-six-frames": [W, "JOB", job(8), "Echo", "handle", "500"],
    "job-lifecycle": [W, "JOB", job(9), "Echo", "lifecycle", "500", echo],
    "heartbeat": [W, "HEARTBEAT"],
    "drain-12.7": [W, "DRAIN"],
    "disconnect": [W, "DISCONNECT"],
    "error-12.6": [W, "ERROR", "malformed", "READY takes CIPW01, READY, capacity (1-1000), name, and one frame per intent type"],
    "job-v2-keyed": ["CIPW02", "JOB", job(10), "SendPayment", "handle", "2900", sp1, "7f3a-pay-42", "2"],
    "job-v2-no-key": ["CIPW02", "JOB", job(11), "Echo", "resolve", "2900", echo, "", "1"],
    "job-v2-seven-frames": ["CIPW02", "JOB", job(12), "Echo", "handle", "500", echo],
    "job-v2-attempt-zero": ["CIPW02", "JOB", job(13), "Echo", "handle", "500", echo, "k", "0"],
    "cancel-v2": ["CIPW02", "CANCEL", job(10)],
    "cancel-v1": [W, "CANCEL", job(10)],
    "job-v5-traced": ["CIPW05", "JOB", job(14), "Echo", "resolve", "2900", echo, "", "1", "confirm", TP, "a=b"],
    "job-v5-untraced": ["CIPW05", "JOB", job(15), "Echo", "handle", "2900", echo, "", "1", "handle", "", ""],
    "job-v5-ten-frames": ["CIPW05", "JOB", job(16), "Echo", "handle", "2900", echo, "", "1", "handle"],
    # CIPW06 (5.17): [CIPW06, JOB, header, body], the header packed (phases 0 resolve, 1 confirm, 2 handle).
    "job-v6-traced": ["CIPW06", "JOB", packed(17, "Echo", 0, 1, 2900, 1, "", (TP, "a=b")), echo],
    "job-v6-keyed": ["CIPW06", "JOB", packed(18, "SendPayment", 2, 2, 2900, 2, "7f3a-pay-42"), sp1],
    "job-v6-untraced": ["CIPW06", "JOB", packed(19, "Echo", 2, 2, 0, 1, ""), echo],
    "job-v6-empty-trace": ["CIPW06", "JOB", packed(20, "Echo", 2, 2, 500, 1, "", ("", "")), echo],
    "job-v6-phase-3": ["CIPW06", "JOB", packed(21, "Echo", 3, 3, 500, 1, ""), echo],
    "job-v6-short": ["CIPW06", "JOB", packed(22, "Echo", 2, 2, 500, 1, "")[:12], echo],
}
for name, frames in jobs.items():
    write("JobFrames", name, message(0, frames))

# JSONValue: bodies and edge cases.
for i, body in enumerate(interactions + [error_body, progress, {"elapsed_ms": 3001, "phase": "confirm", "state": "queued"}]):
    write("JSONValue", f"body-{i:02d}", json.dumps(body, indent=1 if i % 2 else None, ensure_ascii=i % 3 == 0).encode())
for name, text in {
    "numbers": b'[0,-0,-0.0,1.5e-7,1E+2,123456789012345678901234567890,-9223372036854775808,9223372036854775807,5e-324,1.7976931348623157e308]',
    "escapes": b'["\\"\\\\\\/\\b\\f\\n\\r\\t\\u0000\\u00e9\\ud83c\\udf89", "caf\xc3\xa9 \xf0\x9f\x8e\x89"]',
    "duplicate-keys": b'{"a":1,"a":2, "intent" : {"type":"Echo"} , "intent":{"type":"X"}}  ',
    "nested": b'{"a":[[[{"b":[{}]}]]],"c":{"d":{"e":null}}}',
    "literals": b' [true,false,null] ',
    "invalid-number": b'[1e400]',
    "invalid-utf8": b'["\xed\xa0\x80"]',
    "trailing": b'{} x',
}.items():
    write("JSONValue", name, text)

# IntentBody: [mode] then the mode's bytes.
examples = {"RequestRide": 0, "StartWorkout": 1, "SendMessage": 2, "SendPayment": 3, "Echo": 4, "FuzzProbe": 5}
for i, body in enumerate(interactions):
    intent = body["intent"]
    mode = examples.get(intent["type"])
    if mode is not None:
        write("IntentBody", f"intent-{intent['type']}-{i:02d}", bytes([mode]) + b(intent))
for name in sorted(os.listdir(os.path.join(ROOT, "Schemas", "intents"))):
    with open(os.path.join(ROOT, "Schemas", "intents", name), "rb") as f:
        write("IntentBody", f"definition-{name[:-5]}", bytes([6]) + f.read())
job_types = {"RequestRide": 0, "StartWorkout": 1, "SendMessage": 2, "SendPayment": 3, "FuzzProbe": 4}
runs = [(sm1, 0), (sm2, 0), (sm2_resolved, 1), (sm2_confirmed, 2), (sp1, 0), (sp1_final, 2), (ride, 0), (workout, 1), (workout, 2),
        (probe, 0), (probe, 1), (probe, 2), (dict(probe, extra={"kept": [1, 2]}), 0)]
for i, (body, phase) in enumerate(runs):
    write("IntentBody", f"job-{i:02d}-{body['intent']['type']}-{phase}", bytes([7, job_types[body["intent"]["type"]], phase]) + b(body))

# WireBody: [mode] then the mode's bytes.
for name, data in {
    "decimal": b"\x003000", "decimal-leading-zeros": b"\x00000000001", "decimal-ten-digits": b"\x001234567890",
    "utf8": b"\x01\x08caf\xc3\xa9 \xf0\x9f\x8e\x89", "utf8-invalid": b"\x01\x04\xed\xa0\x80\xc0\x80",
    "error-body": b"\x02bad-deadline\xffdeadline must be a decimal number of milliseconds from 10 to 60000",
    "error-body-escapes": b"\x02malformed\xff\"quoted\" \\ \n\t\x01",
    "progress": b"\x03\x02\x00\x00\x01\xf4worker-4711", "progress-queued": b"\x03\x81\x00\x00\x0b\xb9",
}.items():
    write("WireBody", name, data)
