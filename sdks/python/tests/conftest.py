"""Starts a real Aegis server for the suite (sdks/testing/serve.ts), unless AEGIS_TEST_API_URL,
AEGIS_TEST_API_KEY and AEGIS_TEST_GATEWAY_URL name one already running."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import uuid
from pathlib import Path
from typing import Dict, Iterator

import pytest

SDK_ROOT = Path(__file__).resolve().parent.parent
REPO_ROOT = SDK_ROOT.parent.parent
# The package from this checkout, installed or not. No __pycache__ beside the generated modules:
# sdks/python/aegis_sdk/_generated/ holds generated files only (the stale-SDK test checks it).
sys.dont_write_bytecode = True
sys.path.insert(0, str(SDK_ROOT))

from aegis_sdk import Aegis  # noqa: E402

START_TIMEOUT = 120.0


@pytest.fixture(scope="session")
def server() -> Iterator[Dict[str, str]]:
    url, key, gateway = (os.environ.get(n) for n in ("AEGIS_TEST_API_URL", "AEGIS_TEST_API_KEY", "AEGIS_TEST_GATEWAY_URL"))
    if url and key and gateway:
        yield {"url": url, "apiKey": key, "gatewayUrl": gateway}
        return
    process = subprocess.Popen(
        ["node", str(REPO_ROOT / "bin" / "run-ts.mjs"), str(REPO_ROOT / "sdks" / "testing" / "serve.ts")],
        cwd=str(REPO_ROOT),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None and process.stdin is not None
    line: Dict[str, str] = {}

    def read_line() -> None:
        text = process.stdout.readline()  # type: ignore[union-attr]
        if text:
            line.update(json.loads(text))

    reader = threading.Thread(target=read_line, daemon=True)
    reader.start()
    reader.join(START_TIMEOUT)
    if not line:
        process.kill()
        process.wait()
        pytest.fail("sdks/testing/serve.ts printed no JSON line")
    try:
        yield line
    finally:
        # Closing its stdin is how the server knows to stop.
        process.stdin.close()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture(scope="session")
def client(server: Dict[str, str]) -> Aegis:
    return Aegis(api_key=server["apiKey"], base_url=server["url"])


def unique_domain(prefix: str = "site") -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}.example.com"


@pytest.fixture()
def site(client: Aegis) -> Iterator[Dict[str, object]]:
    created = client.shield_sites.create({"domain": unique_domain(), "origin_url": "http://127.0.0.1:9", "mode": "block"})
    yield created  # type: ignore[misc]
    try:
        client.shield_sites.delete(created["id"])
    except Exception:
        pass
