"""Quickstart: protect a site with Shield, then scan a local repository for secrets.

    AEGIS_API_KEY=svc_live_… AEGIS_API_URL=http://localhost:3000 python examples/quickstart.py [path]

1. creates a Shield site (in `log` mode) and an IP access rule denying one address;
2. packs the repository at `path` (default: the current directory; `.git` and `node_modules`
   skipped) into a tar.gz and uploads it as a secrets scan;
3. waits for the scan to finish and prints its findings.
"""
from __future__ import annotations

import io
import os
import sys
import tarfile
import time
import uuid

from aegis_sdk import Aegis, AegisError

SKIPPED = {".git", "node_modules"}
TERMINAL = {"completed", "failed", "canceled"}


def pack(root: str) -> bytes:
    """A tar.gz of `root`, without version-control data or installed dependencies."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for directory, subdirs, files in os.walk(root):
            subdirs[:] = sorted(d for d in subdirs if d not in SKIPPED)
            for name in sorted(files):
                path = os.path.join(directory, name)
                if os.path.isfile(path) and not os.path.islink(path):
                    archive.add(path, arcname=os.path.relpath(path, root), recursive=False)
    return buffer.getvalue()


def main(argv: list) -> int:
    root = os.path.abspath(argv[1] if len(argv) > 1 else os.getcwd())
    client = Aegis()  # AEGIS_API_KEY and AEGIS_API_URL from the environment

    site = client.shield_sites.create(
        {"domain": f"quickstart-{uuid.uuid4().hex[:8]}.example.com", "origin_url": "https://origin.example.com", "mode": "log"}
    )
    rule = client.ip_access_rules.create(site["id"], {"type": "ip", "value": "203.0.113.7", "action": "deny", "note": "quickstart"})
    print(f"Shield site {site['id']} ({site['domain']}): rule {rule['id']} denies {rule['value']}")

    archive = pack(root)
    scan = client.scans.create_secrets(content=archive, content_type="application/gzip")
    print(f"Secrets scan {scan['id']} of {root} ({len(archive)} bytes): {scan['status']}")
    deadline = time.time() + 300
    while scan["status"] not in TERMINAL:
        if time.time() > deadline:
            print("The scan did not finish within 5 minutes", file=sys.stderr)
            return 1
        time.sleep(1)
        scan = client.scans.get(scan["id"])
    if scan["status"] != "completed":
        print(f"Scan {scan['status']}: {scan.get('error')}", file=sys.stderr)
        return 1

    count = 0
    for finding in client.vulnerabilities.list(scan_id=scan["id"], limit=100):
        count += 1
        location = finding["location"]
        where = f"{location.get('path', '?')}:{location.get('line', '?')}"
        print(f"  [{finding['severity']}] {finding['title']} at {where}")
    print(f"{count} finding(s)")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv))
    except AegisError as error:
        print(f"Aegis error: {error}", file=sys.stderr)
        sys.exit(1)
