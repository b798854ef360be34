"""The systemd units of Deploy/systemd (Docs/OPERATIONS.md, "Deploying"): systemd itself checks them (`systemd-analyze verify`,
with the binary under test in place of /usr/local/bin/concierge), every flag they pass is one the subcommand takes,
and their stop timeouts leave room for the drains they wait for."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

UNITS = Path(__file__).resolve().parents[2] / "Deploy" / "systemd"
INSTALLED = "/usr/local/bin/concierge"


def _binary() -> str:
    binary = os.environ.get("CONCIERGE_BIN")
    assert binary and Path(binary).exists(), "set CONCIERGE_BIN to the concierge binary (Scripts/pytest does)"
    return str(Path(binary).resolve())


def _units() -> dict[str, str]:
    units = {path.name: path.read_text() for path in sorted(UNITS.glob("*.service"))}
    assert set(units) == {"concierge-broker.service", "concierge-pool.service"}, sorted(units)
    return units


def _commands(text: str) -> list[list[str]]:
    """The concierge command lines of ExecStart and ExecStartPre (a leading '-' dropped)."""
    commands = []
    for line in text.splitlines():
        match = re.match(r"^ExecStart(?:Pre)?=-?(.*)$", line)
        if match:
            words = shlex.split(match.group(1))
            assert words[0] == INSTALLED, line
            commands.append(words)
    return commands


def _seconds(text: str, key: str) -> int:
    match = re.search(rf"^{key}=(\d+)$", text, re.MULTILINE)
    assert match, f"{key} missing"
    return int(match.group(1))


def test_systemd_accepts_the_units(tmp_path):
    assert shutil.which("systemd-analyze"), "systemd-analyze is needed (Debian's systemd package)"
    binary = _binary()
    paths = []
    for name, text in _units().items():
        path = tmp_path / name
        path.write_text(text.replace(INSTALLED, binary))
        paths.append(str(path))
    result = subprocess.run(["systemd-analyze", "verify", *paths], capture_output=True, text=True, timeout=60)
    # Unknown keys and bad values are warnings with exit status 0: any output at all fails the test.
    assert result.returncode == 0 and not result.stderr.strip() and not result.stdout.strip(), (
        result.stdout + result.stderr
    )


def test_every_flag_the_units_pass_is_one_the_subcommand_takes():
    binary = _binary()
    for name, text in _units().items():
        for words in _commands(text):
            subcommand = [word for word in words[1:3] if not word.startswith("-")]
            help_text = subprocess.run(
                [binary, *subcommand, "--help"], capture_output=True, text=True, timeout=30
            ).stdout
            for word in words:
                if word.startswith("--"):
                    flag = word.split("=", 1)[0]
                    assert re.search(rf"(^|\s){re.escape(flag)}\b", help_text), f"{name}: {' '.join(subcommand)} {flag}"


def test_stop_timeouts_leave_room_for_the_drains():
    units = _units()
    broker = units["concierge-broker.service"]
    # The broker: shutdown grace then linger (5 s each by default, PROTOCOL.md 8.2).
    assert _seconds(broker, "TimeoutStopSec") > 10
    pool = units["concierge-pool.service"]
    # The pool: its workers drain for at most 30 s, then the pool sends SIGKILL.
    assert _seconds(pool, "TimeoutStopSec") > 30
    assert "KillMode=mixed" in pool  # SIGTERM to the pool alone: it signals its workers itself
