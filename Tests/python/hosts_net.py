"""Hosts on one LAN for test_other_hosts.py: Linux network namespaces whose veth links meet on a bridge in the root
namespace (a switch), all on one private /24. Traffic between the namespaces is switched, not routed: the root
namespace needs no address on the LAN and no ip_forward, and a host whose link is down is simply unreachable (its
packets go nowhere else).

Needs root (CAP_NET_ADMIN). Everything made here is removed by `close()`, which is safe after a partial set-up and
more than once. Namespaces are `cgh-<pid>-<name>`; links `ch<pid><letter>` (root side, a bridge port) and
`ch<pid><letter>n` (inside); the bridge `ch<pid>br`; the subnet 10.232.<n>.0/24, <n> chosen from the pid among
subnets no interface uses yet.
"""

from __future__ import annotations

import os

from failover_net import Host, run


class Lan:
    """Namespaces named by `names` (short words, e.g. "broker", "w1"), each with one address on the LAN
    (10.232.<n>.<10 + index>)."""

    def __init__(self, names: list[str]):
        self.hosts: dict[str, Host] = {}
        self._made_ns: list[str] = []
        self._made_links: list[str] = []
        pid = os.getpid()
        used = run(["ip", "-o", "-4", "addr"]).stdout
        base = pid % 200 + 20
        subnets = [n for n in list(range(base, 250)) + list(range(20, base)) if f"10.232.{n}." not in used]
        if not subnets:
            raise RuntimeError("no free 10.232.x.0/24 subnet")
        n = subnets[0]
        self.subnet = f"10.232.{n}.0/24"
        self.bridge = f"ch{pid}br"
        try:
            run(["ip", "link", "add", self.bridge, "type", "bridge"])
            self._made_links.append(self.bridge)
            run(["ip", "link", "set", self.bridge, "up"])
            for index, name in enumerate(names):
                letter = chr(ord("a") + index)
                ns = f"cgh-{pid}-{name}"
                root_if, ns_if = f"ch{pid}{letter}", f"ch{pid}{letter}n"
                run(["ip", "netns", "add", ns])
                self._made_ns.append(ns)
                run(["ip", "link", "add", root_if, "type", "veth", "peer", "name", ns_if])
                self._made_links.append(root_if)
                run(["ip", "link", "set", ns_if, "netns", ns])
                run(["ip", "link", "set", root_if, "master", self.bridge])
                run(["ip", "link", "set", root_if, "up"])
                host = Host(ns, root_if, ns_if, "", f"10.232.{n}.{10 + index}")
                run(["ip", "netns", "exec", ns, "ip", "addr", "add", f"{host.ip}/24", "dev", ns_if])
                run(["ip", "netns", "exec", ns, "ip", "link", "set", ns_if, "up"])
                run(["ip", "netns", "exec", ns, "ip", "link", "set", "lo", "up"])
                self.hosts[name] = host
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        """Deletes the namespaces (their veth ends go with them, and so do the peers), then any link left and the
        bridge."""
        for ns in self._made_ns:
            run(["ip", "netns", "del", ns], check=False)
        for link in reversed(self._made_links):
            if run(["ip", "link", "show", link], check=False).returncode == 0:
                run(["ip", "link", "del", link], check=False)
        self._made_ns, self._made_links = [], []

    def leftovers(self) -> list[str]:
        """Namespaces or links of this object still present (empty after close())."""
        names = run(["ip", "netns", "list"]).stdout.split()
        links = run(["ip", "-o", "link"]).stdout
        present = [h.name for h in self.hosts.values() if h.name in names]
        for link in [self.bridge] + [h.root_if for h in self.hosts.values()]:
            if f" {link}@" in links or f" {link}:" in links:
                present.append(link)
        return present
