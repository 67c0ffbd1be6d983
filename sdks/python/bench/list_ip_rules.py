"""bench:sdk — list every IP rule of a site by hand (urllib + json) and through the SDK's iterator.

Environment: AEGIS_API_URL, AEGIS_API_KEY, AEGIS_BENCH_SITE_ID (a site with 10 000 rules),
AEGIS_BENCH_ROUNDS (default 5). Prints one JSON line:
{"language":"python","items":10000,"raw_ms":[...],"sdk_ms":[...]}
"""
from __future__ import annotations

import json
import os
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Callable, List

# The SDK from this checkout, without leaving __pycache__ beside its generated modules.
sys.dont_write_bytecode = True
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from aegis_sdk import Aegis  # noqa: E402

PAGE_SIZE = 200


def list_raw(base_url: str, api_key: str, site_id: str) -> int:
    """What a user would write without the SDK: page by page, following pagination.next."""
    items: List[dict] = []
    cursor = None
    path = f"{base_url.rstrip('/')}/api/v1/shield/sites/{urllib.parse.quote(site_id, safe='')}/ip-access"
    while True:
        query = {"limit": str(PAGE_SIZE)}
        if cursor:
            query["cursor"] = cursor
        request = urllib.request.Request(f"{path}?{urllib.parse.urlencode(query)}", headers={"Authorization": f"Bearer {api_key}", "Accept": "application/json"})
        with urllib.request.urlopen(request, timeout=60) as response:
            page = json.loads(response.read())
        items.extend(page["data"])
        cursor = page["pagination"]["next"]
        if not cursor:
            return len(items)


def list_sdk(client: Aegis, site_id: str) -> int:
    items = [rule for rule in client.ip_access_rules.list(site_id, limit=PAGE_SIZE)]
    return len(items)


def timed(fn: Callable[[], int]) -> "tuple[float, int]":
    start = time.perf_counter()
    count = fn()
    return (time.perf_counter() - start) * 1000.0, count


def main() -> int:
    base_url = os.environ.get("AEGIS_API_URL", "http://localhost:3000")
    api_key = os.environ["AEGIS_API_KEY"]
    site_id = os.environ["AEGIS_BENCH_SITE_ID"]
    rounds = int(os.environ.get("AEGIS_BENCH_ROUNDS", "5"))
    client = Aegis(api_key=api_key, base_url=base_url)
    raw = lambda: list_raw(base_url, api_key, site_id)  # noqa: E731
    sdk = lambda: list_sdk(client, site_id)  # noqa: E731

    # Warm-up of each (connections, server caches, imports).
    _, raw_items = timed(raw)
    _, sdk_items = timed(sdk)
    raw_ms: List[float] = []
    sdk_ms: List[float] = []
    for _ in range(rounds):
        ms, count = timed(raw)
        raw_ms.append(round(ms, 2))
        raw_items = count
        ms, count = timed(sdk)
        sdk_ms.append(round(ms, 2))
        sdk_items = count
    if raw_items != sdk_items:
        print(f"raw saw {raw_items} items, the SDK {sdk_items}", file=sys.stderr)
        return 1
    print(json.dumps({"language": "python", "items": sdk_items, "raw_ms": raw_ms, "sdk_ms": sdk_ms}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
