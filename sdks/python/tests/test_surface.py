"""The SDK covers every operation of the API document, imports cleanly, and stays Python 3.9 syntax."""
from __future__ import annotations

import ast
import inspect
import json
import keyword
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import aegis_sdk
from aegis_sdk import Aegis, types

from conftest import REPO_ROOT, SDK_ROOT

PACKAGE = SDK_ROOT / "aegis_sdk"


def _snake(name: str) -> str:
    snake = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name).lower()
    return f"{snake}_" if keyword.iskeyword(snake) else snake


def _sdk_operation_ids() -> list:
    document = json.loads((REPO_ROOT / "sdks" / "openapi.json").read_text("utf-8"))
    ids = []
    for path_item in document["paths"].values():
        for method, op in path_item.items():
            if method in ("get", "post", "put", "patch", "delete") and op.get("x-aegis-sdk") is not False:
                ids.append(op["operationId"])
    return sorted(ids)


def test_every_operation_has_a_method() -> None:
    client = Aegis(api_key="svc_test_unused", base_url="http://127.0.0.1:9")
    ids = _sdk_operation_ids()
    assert len(ids) >= 100
    missing = []
    for op_id in ids:
        resource, method = op_id.split(".")
        namespace = getattr(client, _snake(resource), None)
        fn = getattr(namespace, _snake(method), None)
        if not callable(fn) or not (fn.__doc__ or "").strip():
            missing.append(op_id)
    assert missing == []
    assert sorted(aegis_sdk.OPERATIONS) == ids


def test_methods_take_path_params_positionally_and_query_by_keyword() -> None:
    client = Aegis(api_key="svc_test_unused", base_url="http://127.0.0.1:9")
    sig = inspect.signature(client.ip_access_rules.list)
    params = sig.parameters
    assert params["id"].kind is inspect.Parameter.POSITIONAL_OR_KEYWORD
    assert params["limit"].kind is inspect.Parameter.KEYWORD_ONLY
    assert "import_" in dir(client.ip_access_rules)
    assert inspect.signature(client.ip_access_rules.import_).parameters["content_type"].default == "text/csv"


def test_models_are_typed_dicts_with_required_and_optional_keys() -> None:
    site = types.ShieldSiteCreateParams
    assert {"domain", "origin_url", "mode"} <= site.__required_keys__
    assert "labels" in site.__optional_keys__ and "labels" not in site.__required_keys__
    assert types.ShieldAnalytics.__required_keys__  # keys that are keywords (`from`) still typed
    assert "ShieldDecision" in types.__all__


def test_sources_are_python_3_9_syntax() -> None:
    files = sorted(PACKAGE.rglob("*.py")) + sorted((SDK_ROOT / "tests").glob("*.py")) + sorted((SDK_ROOT / "examples").glob("*.py")) + sorted((SDK_ROOT / "bench").glob("*.py"))
    assert files
    for file in files:
        ast.parse(file.read_text("utf-8"), filename=str(file), feature_version=(3, 9))
    # Byte-compiled elsewhere: _generated/ must hold generated files only.
    with tempfile.TemporaryDirectory() as prefix:
        env = {**os.environ, "PYTHONPYCACHEPREFIX": prefix}
        result = subprocess.run([sys.executable, "-m", "compileall", "-q", str(PACKAGE)], capture_output=True, text=True, env=env)
    assert result.returncode == 0, result.stdout + result.stderr


def test_client_configuration_from_environment(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("AEGIS_API_KEY", "svc_from_env")
    monkeypatch.setenv("AEGIS_API_URL", "http://aegis.internal:8080/")
    client = Aegis()
    assert client.api_key == "svc_from_env" and client.base_url == "http://aegis.internal:8080"
    monkeypatch.delenv("AEGIS_API_KEY")
    monkeypatch.delenv("AEGIS_API_URL")
    try:
        Aegis()
    except aegis_sdk.AegisError as exc:
        assert "AEGIS_API_KEY" in str(exc)
    else:
        raise AssertionError("a client without a key must refuse to start")
    assert Aegis(api_key="k").base_url == "http://localhost:3000"


def test_connection_errors_are_typed() -> None:
    client = Aegis(api_key="k", base_url="http://127.0.0.1:9", max_retries=1)
    waits = []
    client._sleep = waits.append  # type: ignore[assignment]
    try:
        client.shield_sites.list()
    except aegis_sdk.APIConnectionError as exc:
        assert exc.status is None
    else:
        raise AssertionError("nothing listens on port 9")
    assert len(waits) == 1


def test_retry_after_parsing() -> None:
    from aegis_sdk._util import backoff_delay, retry_after_delay

    assert retry_after_delay({"Retry-After": "2"}) == 2.0
    assert retry_after_delay({"retry-after": "Fri, 27 Nov 2026 10:00:05 GMT"}, now=1795773600.0) == 5.0
    assert retry_after_delay({}) is None and retry_after_delay({"Retry-After": "soon"}) is None
    assert all(0.25 <= backoff_delay(0) <= 0.5 for _ in range(20))
    assert backoff_delay(10) <= 8.0


def _oldest_python() -> "str | None":
    pyenv = Path(os.environ.get("PYENV_ROOT", str(Path.home() / ".pyenv"))) / "versions"
    candidates = [shutil.which("python3.9"), *sorted(str(p) for p in pyenv.glob("3.9*/bin/python3"))]
    for found in candidates:
        if found:
            probe = subprocess.run([found, "-c", "import sys; print(sys.version_info[:2] >= (3, 9))"], capture_output=True, text=True)
            if probe.stdout.strip() == "True":
                return found
    return None


def test_runs_on_the_oldest_python(server: dict) -> None:
    """On Python 3.9 itself when this machine has one (pyenv), else on this interpreter."""
    python = _oldest_python() or sys.executable
    env = {**os.environ, "AEGIS_API_KEY": server["apiKey"], "AEGIS_API_URL": server["url"], "PYTHONDONTWRITEBYTECODE": "1"}
    result = subprocess.run([python, str(SDK_ROOT / "tests" / "smoke_py39.py")], capture_output=True, text=True, env=env, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.startswith("ok ")


def test_timeouts_are_typed_and_retried() -> None:
    # A listener that accepts connections and never answers: a transport condition.
    import socket

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    try:
        client = Aegis(api_key="k", base_url=f"http://127.0.0.1:{listener.getsockname()[1]}", max_retries=1, timeout=30)
        waits = []
        client._sleep = waits.append  # type: ignore[assignment]
        try:
            client.shield_sites.list(timeout=0.3)
        except aegis_sdk.APITimeoutError as exc:
            assert isinstance(exc, aegis_sdk.APIConnectionError)
        else:
            raise AssertionError("nothing answers: the call must time out")
        assert len(waits) == 1
    finally:
        listener.close()
