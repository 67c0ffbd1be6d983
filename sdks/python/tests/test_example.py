"""The quickstart example runs end to end against the test server."""
from __future__ import annotations

import os
import random
import string
import subprocess
import sys
from pathlib import Path
from typing import Dict

from conftest import SDK_ROOT


def test_quickstart_scans_a_repository(server: Dict[str, str], tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "config").mkdir(parents=True)
    # A fresh credential-shaped string for the secrets scanner to find (documented example keys
    # are placeholders it rightly ignores).
    rng = random.Random()
    access_key = "AKIA" + "".join(rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567") for _ in range(16))
    secret_key = "".join(rng.choice(string.ascii_letters + string.digits + "/+") for _ in range(40))
    (repo / "config" / "settings.py").write_text(f'AWS_ACCESS_KEY_ID = "{access_key}"\nAWS_SECRET_ACCESS_KEY = "{secret_key}"\n')
    (repo / "README.md").write_text("demo\n")
    (repo / "node_modules").mkdir()
    (repo / "node_modules" / "skipped.js").write_text(f'const key = "{access_key}";\n')
    env = {**os.environ, "AEGIS_API_KEY": server["apiKey"], "AEGIS_API_URL": server["url"], "PYTHONPATH": str(SDK_ROOT), "PYTHONDONTWRITEBYTECODE": "1"}
    result = subprocess.run(
        [sys.executable, str(SDK_ROOT / "examples" / "quickstart.py"), str(repo)], env=env, capture_output=True, text=True, timeout=400
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Shield site site_" in result.stdout and "denies 203.0.113.7" in result.stdout
    assert "config/settings.py" in result.stdout, result.stdout
    assert "node_modules" not in result.stdout
    assert "finding(s)" in result.stdout
