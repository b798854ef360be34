"""Hosts for the failover test (test_failover.py): Linux network namespaces joined to the root namespace by veth
pairs, and a private PostgreSQL server from Debian's packages listening on the root side of those links.

Needs root (CAP_NET_ADMIN to make namespaces and links; PostgreSQL runs as the `postgres` user through `setpriv`,
as Sources/ConciergeTestKit/PostgresServer.swift does). Everything made here is removed by `close()`, which is
safe to call after a partial set-up and more than once; processes are stopped by their pid.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path


def run(args: list[str], timeout: float = 30.0, check: bool = True) -> subprocess.CompletedProcess:
    out = subprocess.run(args, capture_output=True, text=True, timeout=timeout)
    if check and out.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} failed ({out.returncode}): {out.stdout}{out.stderr}")
    return out


class Host:
    """One network namespace `name`, joined to the root namespace by the veth pair `root_if` (root side, address
    `root_ip`) <-> `ns_if` (inside, address `ip`), on a /30."""

    def __init__(self, name: str, root_if: str, ns_if: str, root_ip: str, ip: str):
        self.name, self.root_if, self.ns_if, self.root_ip, self.ip = name, root_if, ns_if, root_ip, ip

    def exec_prefix(self) -> list[str]:
        """What runs a command inside this namespace (`ip netns exec` execs it: the pid is the command's)."""
        return ["ip", "netns", "exec", self.name]

    def cut(self) -> None:
        """The host is lost: its link goes down (root side), so nothing in the root namespace reaches it."""
        run(["ip", "link", "set", self.root_if, "down"])

    def restore(self) -> None:
        run(["ip", "link", "set", self.root_if, "up"])


class Network:
    """Namespaces `cg-<pid>-<letter>`, each with a veth pair to the root namespace on 10.231.<n>.0/30 (root .1,
    namespace .2), <n> chosen from the pid among subnets no interface uses yet."""

    def __init__(self, letters: str = "ab"):
        self.hosts: list[Host] = []
        self._made_ns: list[str] = []
        self._made_links: list[str] = []
        pid = os.getpid()
        used = run(["ip", "-o", "-4", "addr"]).stdout
        base = 2 * (pid % 120) + 2
        subnets = [n for n in list(range(base, 250)) + list(range(2, base)) if f"10.231.{n}." not in used]
        if len(subnets) < len(letters):
            raise RuntimeError("no free 10.231.x.0/30 subnet")
        try:
            for letter, n in zip(letters, subnets):
                ns = f"cg-{pid}-{letter}"
                root_if, ns_if = f"cg{pid}{letter}", f"cg{pid}{letter}n"
                run(["ip", "netns", "add", ns])
                self._made_ns.append(ns)
                run(["ip", "link", "add", root_if, "type", "veth", "peer", "name", ns_if])
                self._made_links.append(root_if)
                run(["ip", "link", "set", ns_if, "netns", ns])
                host = Host(ns, root_if, ns_if, f"10.231.{n}.1", f"10.231.{n}.2")
                run(["ip", "addr", "add", f"{host.root_ip}/30", "dev", root_if])
                run(["ip", "link", "set", root_if, "up"])
                run(["ip", "netns", "exec", ns, "ip", "addr", "add", f"{host.ip}/30", "dev", ns_if])
                run(["ip", "netns", "exec", ns, "ip", "link", "set", ns_if, "up"])
                run(["ip", "netns", "exec", ns, "ip", "link", "set", "lo", "up"])
                self.hosts.append(host)
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        """Deletes the namespaces (their veth ends go with them, and so do the peers) and any root-side link left."""
        for ns in self._made_ns:
            run(["ip", "netns", "del", ns], check=False)
        for link in self._made_links:
            if run(["ip", "link", "show", link], check=False).returncode == 0:
                run(["ip", "link", "del", link], check=False)
        self._made_ns, self._made_links = [], []

    def leftovers(self) -> list[str]:
        """Namespaces or links of this object still present (empty after close())."""
        names = run(["ip", "netns", "list"]).stdout
        links = run(["ip", "-o", "link"]).stdout
        return [h.name for h in self.hosts if h.name in names] + [h.root_if for h in self.hosts if
                                                                   f" {h.root_if}@" in links or f" {h.root_if}:" in links]


def postgres_bin() -> Path | None:
    """Debian's PostgreSQL programs (/usr/lib/postgresql/<version>/bin, newest first), or None."""
    root = Path("/usr/lib/postgresql")
    versions = sorted((p for p in root.iterdir() if p.name.isdigit()), key=lambda p: -int(p.name)) \
        if root.is_dir() else []
    for v in versions:
        if (v / "bin" / "initdb").is_file():
            return v / "bin"
    return None


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


class Postgres:
    """A private PostgreSQL server (trust authentication, superuser `concierge`, database `concierge`), listening on
    `hosts` (addresses of the root namespace) and trusting `subnets` too; default server settings otherwise."""

    def __init__(self, hosts: list[str], subnets: list[str], timeout: float = 60.0):
        self.bin = postgres_bin()
        if self.bin is None:
            raise RuntimeError("PostgreSQL is not installed (run Scripts/setup)")
        self.port = free_port()
        self.hosts = hosts
        self.dir = Path(tempfile.mkdtemp(prefix=f"cg-pg-{os.getpid()}-"))
        self.proc: subprocess.Popen | None = None
        self.log_path = self.dir / "server.log"
        try:
            shutil.chown(self.dir, "postgres", "postgres")
            data = self.dir / "data"
            run(self._as_postgres([str(self.bin / "initdb"), "-D", str(data), "-A", "trust", "-U", "concierge",
                                   "--no-sync", "-E", "UTF8"]), timeout=120)
            with open(data / "pg_hba.conf", "a") as f:
                for net in subnets:
                    f.write(f"host all all {net} trust\n")
            log = open(self.log_path, "ab")
            self.proc = subprocess.Popen(
                self._as_postgres([str(self.bin / "postgres"), "-D", str(data), "-h", ",".join(hosts), "-p",
                                   str(self.port), "-k", str(self.dir), "-c", "fsync=on", "-c", "max_connections=50"]),
                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
            log.close()
            end = time.monotonic() + timeout
            while run([str(self.bin / "pg_isready"), "-h", "127.0.0.1", "-p", str(self.port), "-q"],
                      check=False).returncode != 0:
                if self.proc.poll() is not None or time.monotonic() > end:
                    raise RuntimeError(f"the PostgreSQL server did not start:\n{self.log()}")
                time.sleep(0.05)  # polling pg_isready: bounded by `end`
            self.createdb("concierge")
        except BaseException:
            self.close()
            raise

    @staticmethod
    def _as_postgres(args: list[str]) -> list[str]:
        if os.getuid() == 0:
            return ["setpriv", "--reuid=postgres", "--regid=postgres", "--init-groups", "--", *args]
        return args

    def createdb(self, name: str) -> None:
        run([str(self.bin / "createdb"), "-h", "127.0.0.1", "-p", str(self.port), "-U", "concierge", name])

    def url(self, host: str, db: str = "concierge") -> str:
        return f"postgres://concierge@{host}:{self.port}/{db}"

    def sql(self, statement: str, db: str = "concierge") -> str:
        return run([str(self.bin / "psql"), "-h", "127.0.0.1", "-p", str(self.port), "-U", "concierge", "-d", db,
                    "-At", "-v", "ON_ERROR_STOP=1", "-c", statement]).stdout.strip()

    def log(self, lines: int = 40) -> str:
        try:
            return "\n".join(self.log_path.read_text("utf-8", "replace").splitlines()[-lines:])
        except OSError:
            return ""

    def close(self) -> None:
        """Fast shutdown (SIGINT) by pid, SIGKILL after 10 s; the directory is removed."""
        if self.proc is not None:
            if self.proc.poll() is None:
                os.kill(self.proc.pid, signal.SIGINT)
                try:
                    self.proc.wait(10)
                except subprocess.TimeoutExpired:
                    os.kill(self.proc.pid, signal.SIGKILL)
                    self.proc.wait(10)
            self.proc = None
        shutil.rmtree(self.dir, ignore_errors=True)
