"""The live decision stream against the real gateway, and the webhook verifier on the shared vectors."""
from __future__ import annotations

import json
import queue
import threading
import time
import urllib.error
import urllib.request
from typing import Dict

import pytest

from aegis_sdk import Aegis, WebhookSignatureError, webhooks
from aegis_sdk._streaming import parse_events

from conftest import REPO_ROOT


def _gateway_status(gateway: str, domain: str, ip: str) -> int:
    request = urllib.request.Request(f"{gateway}/products?q=1", headers={"Host": domain, "X-Forwarded-For": ip})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status
    except urllib.error.HTTPError as exc:
        return exc.code
    except OSError:
        return 0


def test_live_stream_receives_a_decision(server: Dict[str, str], client: Aegis, site: dict) -> None:
    ip = "203.0.113.99"
    rule = client.ip_access_rules.create(site["id"], {"type": "ip", "value": ip, "action": "deny"})
    decisions: "queue.Queue[dict]" = queue.Queue()
    stream = client.shield_live.stream(site["id"], action="block")

    def consume() -> None:
        try:
            for decision in stream:
                decisions.put(decision)
        except Exception as exc:  # surfaced to the test through the queue
            decisions.put({"error": repr(exc)})

    worker = threading.Thread(target=consume, daemon=True)
    worker.start()
    try:
        # The gateway picks up rules within 250 ms; keep knocking until it denies.
        deadline = time.time() + 20
        status = 0
        while time.time() < deadline:
            status = _gateway_status(server["gatewayUrl"], site["domain"], ip)
            if status == 403:
                break
            time.sleep(0.25)
        assert status == 403
        decision = decisions.get(timeout=20)
        assert "error" not in decision, decision
        assert decision["site_id"] == site["id"] and decision["action"] == "block"
        assert decision["client_ip"] == ip and decision["rule_id"] == rule["id"]
        assert decision["id"].startswith("dec_") and stream.last_event_id == decision["id"]

        # Break the connection under the stream: it reconnects with Last-Event-ID and goes on with
        # the next decision, without repeating the first.
        assert stream._response is not None
        stream._response.close()
        second_ip = "203.0.113.100"
        client.ip_access_rules.create(site["id"], {"type": "ip", "value": second_ip, "action": "deny"})
        deadline = time.time() + 20
        while time.time() < deadline and _gateway_status(server["gatewayUrl"], site["domain"], second_ip) != 403:
            time.sleep(0.25)
        following = decisions.get(timeout=20)
        assert "error" not in following, following
        assert following["client_ip"] == second_ip and following["id"] > decision["id"]
        assert stream.reconnects >= 1
    finally:
        stream.close()
        worker.join(10)
    assert stream.closed and not worker.is_alive()


def test_live_stream_resumes_after_last_event_id(server: Dict[str, str], client: Aegis, site: dict) -> None:
    ip = "203.0.113.101"
    client.ip_access_rules.create(site["id"], {"type": "ip", "value": ip, "action": "deny"})
    deadline = time.time() + 20
    blocked = 0
    while time.time() < deadline and blocked < 2:
        if _gateway_status(server["gatewayUrl"], site["domain"], ip) == 403:
            blocked += 1
        else:
            time.sleep(0.25)
    assert blocked == 2
    # Both decisions are stored; resuming after the first yields the second one first.
    first = None
    deadline = time.time() + 20
    while first is None and time.time() < deadline:
        with client.shield_live.stream(site["id"], last_event_id="dec_" + "0" * 26) as replay:
            first = next(iter(replay))
    assert first is not None
    with client.shield_live.stream(site["id"], last_event_id=first["id"]) as resumed:
        second = next(iter(resumed))
    assert second["id"] > first["id"] and second["client_ip"] == ip


def test_sse_parser_skips_heartbeats_and_reads_fields() -> None:
    raw = [
        b": connected\n", b"\n",
        b"id: dec_1\n", b"event: decision\n", b'data: {"a":1}\n', b"\n",
        b": heartbeat\n", b"\n",
        b"event: dropped\n", b'data: {"count": 3}\n', b"\n",
        b"retry: 500\n", b"data: x\r\n", b"data: y\n", b"\n",
    ]
    events = list(parse_events(iter(raw)))
    assert [(e.event, e.id, e.data) for e in events] == [
        ("decision", "dec_1", '{"a":1}'),
        ("dropped", None, '{"count": 3}'),
        ("message", None, "x\ny"),
    ]
    assert events[2].retry == 500


VECTORS = json.loads((REPO_ROOT / "sdks" / "testdata" / "webhook-signatures.json").read_text("utf-8"))["vectors"]


@pytest.mark.parametrize("vector", VECTORS, ids=[v["name"] for v in VECTORS])
def test_webhook_vectors(vector: dict) -> None:
    ok = webhooks.verify_signature(vector["body"], vector["header"], vector["secret"], tolerance=vector["tolerance"], now=vector["now"])
    assert ok is vector["valid"]
    # Bytes and text are the same payload.
    assert webhooks.verify_signature(vector["body"].encode("utf-8"), vector["header"], vector["secret"], vector["tolerance"], vector["now"]) is vector["valid"]


def test_webhook_tampered_and_stale_are_refused() -> None:
    valid = next(v for v in VECTORS if v["name"] == "valid")
    args = (valid["header"], valid["secret"])
    assert webhooks.verify_signature(valid["body"], *args, now=valid["now"])
    tampered = valid["body"].replace("high", "low")
    assert not webhooks.verify_signature(tampered, *args, now=valid["now"])
    assert not webhooks.verify_signature(valid["body"], *args, now=valid["now"] + 301)
    with pytest.raises(WebhookSignatureError):
        webhooks.construct_event(tampered, *args, now=valid["now"])
    with pytest.raises(WebhookSignatureError):
        webhooks.construct_event(valid["body"], *args, now=valid["now"] - 1000)
    with pytest.raises(WebhookSignatureError):
        webhooks.construct_event(valid["body"], None, valid["secret"])
    event = webhooks.construct_event(valid["body"], *args, now=valid["now"])
    assert event["type"] == "vulnerability.created"


def test_webhook_sign_round_trip() -> None:
    secret = "whsec_test"
    body = '{"id":"evt_1","type":"scan.completed","data":{}}'
    header = f"t=1000,v1={webhooks.sign(body, secret, 1000)}"
    assert webhooks.verify_signature(body, header, secret, now=1100)
    assert not webhooks.verify_signature(body, header, "whsec_other", now=1100)
