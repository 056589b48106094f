"""A TCP proxy for the bridge harness (bridge.py), run inside the upstream namespace: one infra.DelayProxy per
target, all listening on the address given first, each forwarding to a broker on the namespace's loopback.

  ip netns exec NS python delayproxy.py LISTEN_HOST TARGET_HOST:PORT [TARGET_HOST:PORT ...]

Prints the listening ports, one line, space-separated, in the targets' order. Each line then read from
standard input is a delay in seconds that every proxy applies to each chunk, each way, from then on (this
kernel has no `tc netem`, so the harness delays the uplink here). Ends at the end of its standard input.
"""
from __future__ import annotations

import sys

import infra


def main() -> None:
    """Starts the proxies, prints their ports and applies each delay read until standard input ends."""
    cleanup = infra.Cleanup()
    try:
        proxies = []
        for target in sys.argv[2:]:
            host, port = target.rsplit(":", 1)
            proxies.append(infra.DelayProxy(sys.argv[1], (host, int(port)), cleanup))
        print(" ".join(str(p.port) for p in proxies), flush=True)
        for line in sys.stdin:
            delay = float(line.strip() or 0)
            for proxy in proxies:
                proxy.delay = delay
    finally:
        cleanup.run()


if __name__ == "__main__":
    main()
