"""Transcripts (Docs/TRANSCRIPTS.md) against Schemas/json/transcript.schema.json: every line of the checked-in
transcripts validates -- the SendMessage conversation replayed by the Swift tests, the same conversation as the broker
recorded it (concierge broker --transcripts), and the writer's sample, which
IntentTranscriptTests asserts is byte for byte what TranscriptWriter writes -- and lines that break the format do
not. Also what a schema cannot say: a file's records are in a conversation's order. And `concierge replay --worker`
end to end: green against the worker a transcript was recorded with, red with a diff against one whose handler
changed (Fixtures/recorded_worker.py, a CIPW01 worker written from the spec)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

import cip
import cluster

S = cip.SCHEMA_SET
REF = "transcript.schema.json"
FIXTURES = cip.REPO / "Tests" / "IntentTranscriptTests" / "Fixtures"
FILES = sorted(FIXTURES.glob("*.jsonl"))


def records(path: Path) -> list[dict]:
    lines = path.read_text("utf-8").split("\n")
    assert lines[-1] == "", f"{path.name}: every line, the last too, ends with a newline"
    return [json.loads(line) for line in lines[:-1]]


def test_the_fixtures_are_there():
    assert {p.name for p in FILES} >= {"send-message.jsonl", "writer-sample.jsonl", "broker-recorded.jsonl"}


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_every_line_of_a_fixture_validates(path):
    for number, record in enumerate(records(path), 1):
        S.check(REF, record, f"{path.name}:{number}")


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_a_fixture_is_one_conversation_in_order(path):
    kinds = [r["record"] for r in records(path)]
    assert kinds[0] == "start" and kinds.count("start") == 1
    assert "end" not in kinds[:-1], "nothing after end"
    turns = [r["turn"] for r in records(path) if r["record"] == "turn"]
    assert turns == list(range(1, len(turns) + 1))
    end = records(path)[-1]
    if end["record"] == "end":
        assert end["turns"] == len(turns)


@pytest.mark.parametrize("name", ["send-message.jsonl", "broker-recorded.jsonl"])
def test_the_recorded_conversation_is_a_disambiguation_then_option_zero(name):
    rs = records(FIXTURES / name)
    replies = [r for r in rs if r["record"] == "reply"]
    assert replies[0]["body"]["resolve"]["recipient"]["kind"] == "disambiguation"
    assert replies[0]["body"]["conversation"]["state"] == "asking"
    assert [r["sent"] for r in rs if r["record"] == "turn"][1] == {"parameter": "recipient", "option": 0}
    assert replies[1]["body"]["handle"]["code"] == "success"
    for r in rs:
        if r["record"] == "phase" and r["outcome"] in ("continue", "stop"):
            S.check_interaction(r["output"], f"phase {r['turn']} {r['phase']} output")


GOOD_END = {"record": "end", "ending": "completed", "turns": 1, "at": "2026-11-28T12:00:00.000Z"}
GOOD_PHASE = {"record": "phase", "turn": 1, "phase": "resolve", "worker": "w", "attempt": 1, "input": {},
              "outcome": "stop", "output": {}, "ms": 0.5}


@pytest.mark.parametrize("change", [
    {"record": "finish"},
    {"ending": "done"},
    {"turns": -1},
    {"at": "2026-11-28T12:00:00Z"},
    {"at": "2026-11-28T12:00:00.000+01:00"},
    {"extra": 1},
], ids=lambda c: json.dumps(c))
def test_a_broken_end_line_is_invalid(change):
    assert list(S.validator(REF).iter_errors({**GOOD_END, **change}))


@pytest.mark.parametrize("change", [
    {"turn": 0},
    {"phase": "lifecycle"},
    {"outcome": "maybe"},
    {"attempt": 0},
    {"ms": -1},
    {"input": 5},
], ids=lambda c: json.dumps(c))
def test_a_broken_phase_line_is_invalid(change):
    assert list(S.validator(REF).iter_errors({**GOOD_PHASE, **change}))


def test_a_line_without_a_required_key_is_invalid():
    for key in GOOD_PHASE:
        line = {k: v for k, v in GOOD_PHASE.items() if k != key}
        assert list(S.validator(REF).iter_errors(line)), f"valid without {key}"
    S.check(REF, GOOD_PHASE, "the good phase line")
    S.check(REF, GOOD_END, "the good end line")


# -- concierge replay, end to end: the worker-process target against workers written from the spec -----------------

def replay(*arguments: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(cluster.binary()), "replay", *arguments], capture_output=True, text=True, timeout=120)


RECORDED = FIXTURES / "broker-recorded.jsonl"
RECORDED_WORKER = FIXTURES / "recorded_worker.py"


def test_a_broker_transcript_replays_green_against_the_worker_it_was_recorded_with():
    worker = cluster.binary().parent / "concierge-worker"
    result = replay(str(RECORDED), "--worker", str(worker), "--ignore", "**.data.messageId", "--json")
    assert result.returncode == 0, result.stdout + result.stderr
    report = json.loads(result.stdout)
    assert report["ok"] and report["transcripts"][0]["compared"] == 4


def test_a_worker_whose_handler_changed_replays_red_with_a_readable_diff():
    same = replay(str(RECORDED), "--worker", str(RECORDED_WORKER), "--worker-arg", str(RECORDED))
    assert same.returncode == 0, same.stdout + same.stderr
    changed = replay(str(RECORDED), "--worker", str(RECORDED_WORKER), "--worker-arg", str(RECORDED),
                     "--worker-arg", "--change-handle")
    assert changed.returncode == 1, changed.stdout + changed.stderr
    assert 'turn 2, handle, output: handle.code\n- recorded: "success"\n+ replayed: "failure"' in changed.stdout


def test_a_transcript_the_broker_records_now_validates_and_replays_green(run_dir, tmp_path):
    """A broker with --transcripts records a conversation whose first turn asks for it (flag `record`): its file
    validates line by line, is one conversation in order, and replays green against the worker that served it."""
    transcripts = tmp_path / "transcripts"
    broker = cluster.Broker("recording", run_dir, {"transcripts": transcripts})
    pool = None
    try:
        broker.wait_ready()
        pool = cluster.start_pool(broker, run_dir, "recording-pool", workers=1)
        cluster.wait_for_workers(broker, 1, procs=[pool])
        intent = {"type": "SendMessage", "parameters": {"recipient": {"displayName": "John"}, "content": "Hi"}}
        with cip.Client(broker.frontend, version=3) as client:
            def turn(conversation: str, number: int, body: dict, flags: bytes = b"") -> cip.Message:
                return client.ending(client.turn(conversation, number, body, flags=flags))
            first = turn("c-recorded", 1, {"intent": intent}, flags=b"record")
            assert first.status == "final", first
            last = turn("c-recorded", 2, {"parameter": "recipient", "option": 0})
            assert last.status == "final" and last.phase == "handle", last
            # Not asked for: not recorded.
            assert turn("c-plain", 1, {"intent": intent}).status == "final"
        files = sorted(transcripts.glob("*.jsonl"))
        assert [f.name.startswith("c-recorded-") for f in files] == [True], files
        lines = records(files[0])
        for line in lines:
            S.check(REF, line, "a line the broker wrote")
        assert [line["record"] for line in lines] == [
            "start", "turn", "phase", "reply", "turn", "phase", "phase", "phase", "reply", "end"]
        assert lines[-1]["ending"] == "completed" and lines[0]["flags"] == ["record"]
        worker = cluster.binary().parent / "concierge-worker"
        result = replay(str(files[0]), "--worker", str(worker), "--ignore", "**.data.messageId")
        assert result.returncode == 0, result.stdout + result.stderr
    finally:
        if pool is not None:
            pool.stop()
        broker.stop()
