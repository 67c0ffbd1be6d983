"""Auto-pagination across pages, typed errors with their codes, CSV import row errors, request ids."""
from __future__ import annotations

import pytest

from aegis_sdk import Aegis, AegisError, NotFoundError, UnprocessableEntityError, ValidationError


def _csv(count: int, third_octet: int = 0) -> str:
    rows = ["type,value,action,note"] + [f"ip,10.9.{third_octet + i // 250}.{i % 250 + 1},deny,row {i}" for i in range(count)]
    return "\n".join(rows) + "\n"


def test_pagination_across_pages(client: Aegis, site: dict) -> None:
    imported = client.ip_access_rules.import_(site["id"], _csv(125))
    assert imported["created"] == 125
    page = client.ip_access_rules.list(site["id"], limit=50)
    assert len(page.data) == 50 and page.has_next_page()
    # Page by page.
    pages = list(page.iter_pages())
    assert [len(p.data) for p in pages] == [50, 50, 25]
    assert not pages[-1].has_next_page() and pages[-1].next_page() is None
    second = page.next_page()
    assert second is not None and second.data[0]["id"] == pages[1].data[0]["id"]
    # Every item of every page, lazily.
    ids = [rule["id"] for rule in client.ip_access_rules.list(site["id"], limit=50)]
    assert len(ids) == 125 and len(set(ids)) == 125
    # Filters travel with every page.
    assert sum(1 for _ in client.ip_access_rules.list(site["id"], limit=40, action="deny")) == 125
    assert sum(1 for _ in client.ip_access_rules.list(site["id"], limit=40, action="allow")) == 0


def test_not_found_is_typed(client: Aegis) -> None:
    with pytest.raises(NotFoundError) as caught:
        client.shield_sites.get("site_doesnotexist", request_id="req_sdk_python_404")
    error = caught.value
    assert error.status == 404 and error.code == "not_found"
    assert error.message and isinstance(error.details, dict)
    # The request id we sent comes back on the error.
    assert error.request_id == "req_sdk_python_404"


def test_validation_error_carries_fields(client: Aegis) -> None:
    with pytest.raises(UnprocessableEntityError) as caught:
        client.shield_sites.create({"domain": "x", "origin_url": "http://127.0.0.1:9", "mode": "block"})  # type: ignore[typeddict-item]
    error = caught.value
    assert isinstance(error, ValidationError) and isinstance(error, AegisError)
    assert error.status == 422 and error.code == "validation_failed"
    assert any(f["field"] == "domain" for f in error.details["fields"])
    assert error.request_id and error.request_id.startswith("req_")


def test_csv_import_row_error(client: Aegis, site: dict) -> None:
    bad = "type,value,action,note\nip,10.1.1.1,deny,ok\nip,not-an-ip,deny,bad\n"
    with pytest.raises(UnprocessableEntityError) as caught:
        client.ip_access_rules.import_(site["id"], bad)
    rows = caught.value.details["rows"]
    assert any(r["line"] == 3 for r in rows), rows
    assert all({"line", "column", "reason"} <= set(r) for r in rows)
    # All or nothing: the good row was not created either.
    assert list(client.ip_access_rules.list(site["id"])) == []
    # Duplicates are skipped on request.
    client.ip_access_rules.import_(site["id"], "type,value,action,note\nip,10.1.1.1,deny,\n")
    again = client.ip_access_rules.import_(site["id"], b"type,value,action,note\nip,10.1.1.1,deny,\n", on_conflict="skip")
    assert again["created"] == 0 and again["skipped"] == 1
