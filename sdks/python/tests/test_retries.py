"""Retries after a real 429 with Retry-After, and idempotency keys reused across retries."""
from __future__ import annotations

import socket
import threading
import time
from typing import Callable, Dict, List

import pytest

from aegis_sdk import Aegis, RateLimitError


def _concurrently(calls: int, fn: Callable[[], object]) -> List[object]:
    """Results (or raised errors) of `calls` simultaneous calls: "quick" even on a slow machine."""
    out: List[object] = [None] * calls
    barrier = threading.Barrier(calls)

    def run(i: int) -> None:
        barrier.wait()
        try:
            out[i] = fn()
        except Exception as exc:  # collected for the assertions
            out[i] = exc

    threads = [threading.Thread(target=run, args=(i,)) for i in range(calls)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    return out


def test_rate_limited_without_retries_then_retried(server: Dict[str, str], site: dict) -> None:
    # The analytics route allows 2 calls a second on the test server: a third at once gets a 429.
    no_retries = Aegis(api_key=server["apiKey"], base_url=server["url"], max_retries=0)
    errors: List[object] = []
    for _ in range(3):  # again if the three calls happened to straddle two 1-second windows
        time.sleep(1.1)
        outcomes = _concurrently(3, lambda: no_retries.shield_analytics.get(site["id"]))
        errors = [o for o in outcomes if isinstance(o, Exception)]
        if errors:
            break
    assert errors and all(isinstance(e, RateLimitError) for e in errors), outcomes
    error = errors[0]
    assert isinstance(error, RateLimitError)
    assert error.status == 429 and error.code == "rate_limited"
    assert {k.lower(): v for k, v in error.headers.items()}.get("retry-after") == "1"

    waits: List[float] = []
    retrying = Aegis(api_key=server["apiKey"], base_url=server["url"], max_retries=2)
    retrying._sleep = lambda seconds: (waits.append(seconds), time.sleep(seconds))  # type: ignore[assignment]
    for _ in range(3):
        time.sleep(1.1)
        results = _concurrently(3, lambda: retrying.shield_analytics.get(site["id"]))
        assert all(isinstance(r, dict) for r in results), results
        if waits:
            break
    # The limited call waited as Retry-After said (1 s), not a guessed backoff.
    assert waits and all(w == pytest.approx(1.0, abs=0.01) for w in waits)


def test_same_idempotency_key_creates_once(client: Aegis, site: dict) -> None:
    key = f"sdk-python-{time.time_ns()}"
    body = {"type": "ip", "value": "198.51.100.77", "action": "deny"}
    first = client.ip_access_rules.create(site["id"], body, idempotency_key=key)
    second = client.ip_access_rules.create(site["id"], body, request_options={"idempotency_key": key})
    assert first["id"] == second["id"]
    assert [r["id"] for r in client.ip_access_rules.list(site["id"])] == [first["id"]]


class DroppingProxy:
    """A TCP relay in front of the API that forwards the first request but drops its connection
    before the answer comes back: what a flaky network does, not a fake of the API."""

    def __init__(self, upstream: str) -> None:
        host, port = upstream.split("//", 1)[1].split(":")
        self.upstream = (host, int(port.rstrip("/")))
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(8)
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        self.requests: List[bytes] = []
        self.drop_next = 1
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._relay, args=(conn,), daemon=True).start()

    @staticmethod
    def _read_request(conn: socket.socket) -> bytes:
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = conn.recv(65536)
            if not chunk:
                return data
            data += chunk
        head, _, rest = data.partition(b"\r\n\r\n")
        length = 0
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value.strip())
        while len(rest) < length:
            rest += conn.recv(65536)
        return head + b"\r\n\r\n" + rest

    def _relay(self, conn: socket.socket) -> None:
        with conn:
            request = self._read_request(conn)
            self.requests.append(request)
            with socket.create_connection(self.upstream) as up:
                up.sendall(request)
                answer = b""
                while True:  # urllib asks for Connection: close, so the answer ends at EOF
                    chunk = up.recv(65536)
                    if not chunk:
                        break
                    answer += chunk
            if self.drop_next > 0:
                self.drop_next -= 1
                conn.shutdown(socket.SHUT_RDWR)
                return
            conn.sendall(answer)

    def close(self) -> None:
        self.listener.close()


def _header(request: bytes, name: str) -> str:
    for line in request.split(b"\r\n\r\n")[0].split(b"\r\n")[1:]:
        key, _, value = line.partition(b":")
        if key.strip().lower() == name.lower().encode():
            return value.strip().decode()
    return ""


def test_retry_after_dropped_connection_reuses_key(server: Dict[str, str], client: Aegis, site: dict) -> None:
    proxy = DroppingProxy(server["url"])
    try:
        flaky = Aegis(api_key=server["apiKey"], base_url=proxy.url, max_retries=2)
        flaky._sleep = lambda seconds: None  # type: ignore[assignment]
        rule = flaky.ip_access_rules.create(site["id"], {"type": "ip", "value": "198.51.100.88", "action": "deny"})
    finally:
        proxy.close()
    assert len(proxy.requests) == 2
    keys = {_header(r, "Idempotency-Key") for r in proxy.requests}
    assert len(keys) == 1 and keys != {""}
    # The first attempt ran on the server; the retry got its stored answer instead of a second rule.
    rules = [r for r in client.ip_access_rules.list(site["id"]) if r["value"] == "198.51.100.88"]
    assert [r["id"] for r in rules] == [rule["id"]]


def test_generated_keys_differ_between_calls(server: Dict[str, str], site: dict) -> None:
    proxy = DroppingProxy(server["url"])
    proxy.drop_next = 0
    try:
        c = Aegis(api_key=server["apiKey"], base_url=proxy.url)
        c.ip_access_rules.create(site["id"], {"type": "ip", "value": "198.51.100.90", "action": "deny"})
        c.ip_access_rules.create(site["id"], {"type": "ip", "value": "198.51.100.91", "action": "deny"})
        c.ip_access_rules.list(site["id"])
    finally:
        proxy.close()
    keys = [_header(r, "Idempotency-Key") for r in proxy.requests]
    assert keys[0] and keys[1] and keys[0] != keys[1]
    assert keys[2] == ""  # reads carry none
