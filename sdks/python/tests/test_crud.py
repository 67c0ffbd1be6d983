"""A create / get / list / update / delete round trip of every managed kind, against the real server."""
from __future__ import annotations

import json

import pytest

from aegis_sdk import Aegis, NotFoundError

from conftest import unique_domain


def test_shield_site_round_trip(client: Aegis) -> None:
    domain = unique_domain("crud")
    site = client.shield_sites.create({"domain": domain, "origin_url": "http://127.0.0.1:9", "mode": "log", "labels": {"team": "sdk"}})
    assert site["domain"] == domain and site["mode"] == "log"
    assert client.shield_sites.get(site["id"])["domain"] == domain
    assert site["id"] in [s["id"] for s in client.shield_sites.list(domain=domain)]
    updated = client.shield_sites.update(site["id"], {"mode": "block"})
    assert updated["mode"] == "block"
    assert client.shield_sites.delete(site["id"]) is None
    with pytest.raises(NotFoundError):
        client.shield_sites.get(site["id"])


def test_ip_access_rule_round_trip(client: Aegis, site: dict) -> None:
    rule = client.ip_access_rules.create(site["id"], {"type": "ip", "value": "203.0.113.7", "action": "deny", "note": "sdk"})
    assert rule["value"] == "203.0.113.7" and rule["action"] == "deny"
    assert client.ip_access_rules.get(site["id"], rule["id"])["id"] == rule["id"]
    assert [r["id"] for r in client.ip_access_rules.list(site["id"])] == [rule["id"]]
    assert client.ip_access_rules.update(site["id"], rule["id"], {"note": "changed"})["note"] == "changed"
    client.ip_access_rules.delete(site["id"], rule["id"])
    with pytest.raises(NotFoundError):
        client.ip_access_rules.get(site["id"], rule["id"])


def test_virtual_patch_round_trip(client: Aegis, site: dict) -> None:
    patch = client.virtual_patches.create(
        site["id"], {"url_pattern": "/search", "method": "GET", "match_param": "q", "match_regex": "(?i)union\\s+select", "action": "block"}
    )
    assert patch["url_pattern"] == "/search"
    assert client.virtual_patches.get(site["id"], patch["id"])["match_param"] == "q"
    assert patch["id"] in [p["id"] for p in client.virtual_patches.list(site["id"])]
    assert client.virtual_patches.update(site["id"], patch["id"], {"labels": {"ticket": "sec-1"}})["labels"] == {"ticket": "sec-1"}
    client.virtual_patches.delete(site["id"], patch["id"])
    with pytest.raises(NotFoundError):
        client.virtual_patches.get(site["id"], patch["id"])


def test_rate_limit_rule_round_trip(client: Aegis, site: dict) -> None:
    rule = client.rate_limit_rules.create(
        site["id"], {"identity": "ip", "url_pattern": "/login", "method": "POST", "budget": 10, "window_seconds": 60, "action": "block"}
    )
    assert rule["budget"] == 10
    assert client.rate_limit_rules.get(site["id"], rule["id"])["url_pattern"] == "/login"
    assert rule["id"] in [r["id"] for r in client.rate_limit_rules.list(site["id"])]
    assert client.rate_limit_rules.update(site["id"], rule["id"], {"budget": 20})["budget"] == 20
    client.rate_limit_rules.delete(site["id"], rule["id"])
    with pytest.raises(NotFoundError):
        client.rate_limit_rules.get(site["id"], rule["id"])


def test_scan_schedule_round_trip(client: Aegis) -> None:
    schedule = client.scan_schedules.create(
        {"name": "nightly sdk", "scan_type": "dast", "target": "https://app.example.com", "cron": "0 3 * * *", "enabled": False}
    )
    assert schedule["cron"] == "0 3 * * *"
    assert client.scan_schedules.get(schedule["id"])["name"] == "nightly sdk"
    assert schedule["id"] in [s["id"] for s in client.scan_schedules.list()]
    assert client.scan_schedules.update(schedule["id"], {"cron": "0 4 * * 1"})["cron"] == "0 4 * * 1"
    client.scan_schedules.delete(schedule["id"])
    with pytest.raises(NotFoundError):
        client.scan_schedules.get(schedule["id"])


def test_webhook_round_trip(client: Aegis) -> None:
    webhook = client.webhooks.create({"url": "https://hooks.example.com/aegis", "events": ["scan.completed"], "description": "sdk"})
    assert webhook["secret"].startswith("whsec_")
    assert client.webhooks.get(webhook["id"])["url"] == "https://hooks.example.com/aegis"
    assert webhook["id"] in [w["id"] for w in client.webhooks.list()]
    assert client.webhooks.update(webhook["id"], {"description": "changed"})["description"] == "changed"
    client.webhooks.delete(webhook["id"])
    with pytest.raises(NotFoundError):
        client.webhooks.get(webhook["id"])


SCHEMA_YAML = """openapi: 3.0.3
info:
  title: Shop
  version: "1"
paths:
  /orders/{id}:
    get:
      parameters:
        - name: id
          in: path
          required: true
          schema:
            type: integer
      responses:
        "200":
          description: ok
"""


def test_openapi_schema_upload_get_delete(client: Aegis, site: dict) -> None:
    uploaded = client.shield_schema.upload(site["id"], content=SCHEMA_YAML, content_type="application/yaml")
    assert uploaded["site_id"] == site["id"] if "site_id" in uploaded else True
    got = client.shield_schema.get(site["id"])
    assert json.dumps(got)  # a JSON object describing the stored schema
    client.shield_schema.delete(site["id"])
    with pytest.raises(NotFoundError):
        client.shield_schema.get(site["id"])
    # The JSON form: the same document as JSON text.
    as_json = json.dumps({"openapi": "3.0.3", "info": {"title": "Shop", "version": "1"}, "paths": {"/health": {"get": {"responses": {"200": {"description": "ok"}}}}}})
    client.shield_schema.upload(site["id"], content=as_json, content_type="application/vnd.oai.openapi+json")
    assert client.shield_schema.get(site["id"])
