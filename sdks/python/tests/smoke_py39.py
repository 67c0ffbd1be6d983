"""Run by test_surface.py under the oldest Python found (3.9 when installed), without pytest:
imports the package, resolves every annotation, and does a few real calls."""
from __future__ import annotations

import json
import os
import sys
import typing
import uuid
from pathlib import Path

sys.dont_write_bytecode = True
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import aegis_sdk  # noqa: E402
from aegis_sdk import Aegis, NotFoundError, types, webhooks  # noqa: E402
from aegis_sdk._base import BaseClient  # noqa: E402
from aegis_sdk._generated import resources  # noqa: E402


def main() -> None:
    # Every annotation resolves on this interpreter (3.9 has no `X | Y`, no NotRequired).
    for name in types.__all__:
        typing.get_type_hints(getattr(types, name))
    namespace = {**vars(types), **vars(resources), "BaseClient": BaseClient}
    for name in resources.__all__:
        cls = getattr(resources, name)
        for attr in vars(cls).values():
            if callable(attr):
                typing.get_type_hints(attr, globalns=namespace)

    vectors = json.loads((ROOT.parent / "testdata" / "webhook-signatures.json").read_text("utf-8"))["vectors"]
    for v in vectors:
        assert webhooks.verify_signature(v["body"], v["header"], v["secret"], v["tolerance"], v["now"]) is v["valid"], v["name"]

    client = Aegis(api_key=os.environ["AEGIS_API_KEY"], base_url=os.environ["AEGIS_API_URL"])
    site = client.shield_sites.create({"domain": f"py39-{uuid.uuid4().hex[:8]}.example.com", "origin_url": "http://127.0.0.1:9", "mode": "log"})
    client.ip_access_rules.import_(site["id"], "type,value,action,note\n" + "".join(f"ip,10.39.0.{i},deny,\n" for i in range(1, 8)))
    assert sum(1 for _ in client.ip_access_rules.list(site["id"], limit=3)) == 7
    client.shield_sites.delete(site["id"])
    try:
        client.shield_sites.get(site["id"])
    except NotFoundError as error:
        assert error.code == "not_found"
    else:
        raise AssertionError("deleted site still found")
    print(f"ok {sys.version_info[0]}.{sys.version_info[1]} aegis_sdk {aegis_sdk.__version__}")


if __name__ == "__main__":
    main()
