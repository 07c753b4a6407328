"""Where `memconsole serve` listens, and whether it may listen there as asked.

The rule: a non-loopback address needs TLS (`--cert` and `--key`), always; on loopback, plain HTTP
only with `--insecure-http` (anyone with a shell on this machine can reach a loopback port, and a
password sent over plain HTTP can be read by whoever can watch it).
"""

from __future__ import annotations

import ipaddress
import ssl
from dataclasses import dataclass
from pathlib import Path

from engine.errors import InvalidInput

DEFAULT_BIND = "127.0.0.1:8765"


@dataclass(frozen=True)
class Bind:
    host: str
    port: int

    @property
    def loopback(self) -> bool:
        if self.host == "localhost":
            return True
        try:
            return ipaddress.ip_address(self.host).is_loopback
        except ValueError:
            return False  # a host name: it may resolve to anything


def parse_bind(text: str) -> Bind:
    """`HOST:PORT`, `[IPv6]:PORT` or `:PORT` (loopback)."""
    t = text.strip()
    if t.startswith("["):
        host, _, rest = t[1:].partition("]")
        port_text = rest[1:] if rest.startswith(":") else ""
    else:
        host, _, port_text = t.rpartition(":")
        host = host or "127.0.0.1"
    try:
        port = int(port_text)
    except ValueError:
        raise InvalidInput(f"--bind is HOST:PORT, e.g. {DEFAULT_BIND}, not {text!r}") from None
    if not 0 < port < 65536 or not host:
        raise InvalidInput(f"--bind is HOST:PORT with a port 1-65535, not {text!r}")
    return Bind(host, port)


def tls_context(
    bind: Bind, cert: Path | None, key: Path | None, insecure_http: bool
) -> ssl.SSLContext | None:
    """The TLS context to serve with, or None for plain HTTP where that is allowed; else one line
    saying what to add."""
    if (cert is None) != (key is None):
        raise InvalidInput("TLS needs both --cert and --key")
    if cert is not None and key is not None:
        if insecure_http:
            raise InvalidInput("--insecure-http and --cert/--key contradict each other; choose one")
        ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        ctx.minimum_version = ssl.TLSVersion.TLSv1_2
        try:
            ctx.load_cert_chain(str(cert), str(key))
        except (OSError, ssl.SSLError) as e:
            raise InvalidInput(f"cannot load the TLS certificate/key: {e}") from None
        return ctx
    if not bind.loopback:
        raise InvalidInput(
            f"refusing to serve on {bind.host} without TLS: passwords and the console would cross "
            "the network in clear; give --cert and --key (or bind 127.0.0.1 behind a TLS proxy)"
        )
    if not insecure_http:
        raise InvalidInput(
            "plain HTTP on loopback needs --insecure-http (anyone on this machine can reach the "
            "port); or give --cert and --key"
        )
    return None
