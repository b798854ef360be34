"""The permissions file's format (Docs/PERMISSIONS.md, Schemas/json/permissions.schema.json): the example in Deploy/
validates, and each kind of mistake a person makes editing one by hand does not."""

from __future__ import annotations

import copy
import json
import pathlib
import subprocess

import pytest

import cip
import cluster

S = cip.SCHEMA_SET
EXAMPLE = json.loads((pathlib.Path(__file__).parents[2] / "Deploy" / "permissions.example.json").read_text("utf-8"))
REF = "permissions.schema.json"


def errors(document) -> list[str]:
    return [e.message for e in S.validator(REF).iter_errors(document)]


def test_the_example_is_valid():
    assert errors(EXAMPLE) == []
    assert set(EXAMPLE["identities"]) == {"payments-service", "chat-bot", "payment-workers"}


def broken(change):
    document = copy.deepcopy(EXAMPLE)
    change(document)
    return document


@pytest.mark.parametrize("document", [
    broken(lambda d: d.update(version=2)),
    broken(lambda d: d.pop("identities")),
    broken(lambda d: d.update(extra=True)),
    broken(lambda d: d["identities"].update({"bad name": {"keys": [EXAMPLE["identities"]["chat-bot"]["keys"][0]]}})),
    broken(lambda d: d["identities"]["chat-bot"].update(keys="not a list")),
    broken(lambda d: d["identities"]["chat-bot"].update(keys=["too short"])),
    broken(lambda d: d["identities"]["chat-bot"].update(sends={"allow": ["*"]})),
    broken(lambda d: d["identities"]["chat-bot"]["send"].update(allow="*")),
    broken(lambda d: d["identities"]["chat-bot"]["send"].update(allow=["Echo:lifecycle"])),
    broken(lambda d: d["identities"]["chat-bot"]["send"].update(allow=["Echo:"])),
    broken(lambda d: d["identities"]["chat-bot"]["send"].update(allow=["Send Payment"])),
    broken(lambda d: d["identities"]["chat-bot"]["send"].update(only=["Echo"])),
], ids=["version", "no-identities", "unknown-key", "name", "keys-not-list", "short-key", "unknown-list", "allow-not-array",
        "lifecycle-phase", "empty-phase", "space-in-type", "unknown-list-key"])
def test_mistakes_are_invalid(document):
    assert errors(document), f"accepted: {json.dumps(document)}"


# -- The reference implementation agrees: `concierge permissions check` and `who` (Docs/PERMISSIONS.md) -----------


def concierge(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(cluster.binary()), "permissions", *args], capture_output=True, text=True, timeout=60)


EXAMPLE_PATH = str(pathlib.Path(__file__).parents[2] / "Deploy" / "permissions.example.json")


def test_check_prints_what_each_identity_may_send_and_serve():
    result = concierge("check", EXAMPLE_PATH)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == f"{EXAMPLE_PATH}: ok, 3 identities"
    assert "  send: SendPayment RequestRide:resolve,confirm" in lines
    assert "  send: * except SendPayment com.bank.*" in lines
    assert "  serve: SendPayment com.bank.* except com.bank.internal.*" in lines


@pytest.mark.parametrize("name,change", [
    ("version", lambda d: d.update(version=2)),
    ("short-key", lambda d: d["identities"]["chat-bot"].update(keys=["too short"])),
    ("lifecycle-phase", lambda d: d["identities"]["chat-bot"]["send"].update(allow=["Echo:lifecycle"])),
    ("unknown-list", lambda d: d["identities"]["chat-bot"].update(sends={"allow": ["*"]})),
])
def test_check_refuses_what_the_schema_refuses(tmp_path, name, change):
    """Each mistake the schema refuses (test_mistakes_are_invalid) the broker's reader refuses too, naming the place."""
    document = broken(change)
    assert errors(document)
    path = tmp_path / "permissions.json"
    path.write_text(json.dumps(document))
    result = concierge("check", str(path))
    assert result.returncode == 1
    assert result.stderr.startswith("concierge permissions: permissions-malformed: "), result.stderr


def test_check_refuses_a_key_listed_twice_and_a_file_that_is_not_json(tmp_path):
    document = broken(lambda d: d["identities"]["payment-workers"].update(
        keys=EXAMPLE["identities"]["chat-bot"]["keys"]))
    assert errors(document) == []  # the schema cannot say it; the reader does
    path = tmp_path / "permissions.json"
    path.write_text(json.dumps(document))
    result = concierge("check", str(path))
    assert result.returncode == 1 and "permissions-duplicate-key" in result.stderr, result.stderr
    path.write_text("{not json")
    result = concierge("check", str(path))
    assert result.returncode == 1 and "permissions-malformed: not JSON" in result.stderr, result.stderr
    result = concierge("check", str(tmp_path / "missing.json"))
    assert result.returncode == 1 and "permissions-unreadable" in result.stderr, result.stderr


def test_who_shows_the_identity_of_a_key_or_a_pub_file(tmp_path):
    key = EXAMPLE["identities"]["payment-workers"]["keys"][0]
    result = concierge("who", key, "--permissions", EXAMPLE_PATH)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[0] == "payment-workers (1 key)"
    # A key pair made by `concierge keygen`: its .pub file, unknown to the example.
    made = subprocess.run([str(cluster.binary()), "keygen", "--out", str(tmp_path / "k")], capture_output=True,
                          text=True, timeout=60)
    assert made.returncode == 0, made.stderr
    result = concierge("who", str(tmp_path / "k.pub"), "--permissions", EXAMPLE_PATH)
    assert result.returncode == 1 and "permissions-unknown-key" in result.stderr, result.stderr
