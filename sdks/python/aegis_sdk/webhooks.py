"""Verifying the `X-Service-Signature` header Aegis puts on every webhook delivery.

The header is `t=<unix seconds>,v1=<hex>` where v1 = HMAC-SHA256(secret, "<t>.<raw body>"); during a
secret rotation it carries one `v1=` per active secret. Verify the RAW body, before any JSON parsing.
"""
from __future__ import annotations

import hashlib
import hmac
import json
import time
from typing import Any, Dict, List, Optional, Tuple, Union

from ._errors import WebhookSignatureError

SIGNATURE_HEADER = "X-Service-Signature"
DEFAULT_TOLERANCE = 300

__all__ = ["SIGNATURE_HEADER", "DEFAULT_TOLERANCE", "verify_signature", "construct_event", "sign", "WebhookSignatureError"]


def _parse_header(header: str) -> Optional[Tuple[int, List[str]]]:
    timestamp: Optional[int] = None
    signatures: List[str] = []
    for part in header.split(","):
        key, sep, value = part.strip().partition("=")
        if not sep:
            continue
        if key == "t":
            if not value.isdigit() or timestamp is not None:
                return None
            timestamp = int(value)
        elif key == "v1":
            signatures.append(value)
    if timestamp is None or not signatures:
        return None
    return timestamp, signatures


def _as_bytes(value: Union[str, bytes]) -> bytes:
    return value.encode("utf-8") if isinstance(value, str) else bytes(value)


def sign(payload: Union[str, bytes], secret: str, timestamp: int) -> str:
    """The v1 signature of `payload` at `timestamp` (hex), as the server computes it."""
    message = str(timestamp).encode("ascii") + b"." + _as_bytes(payload)
    return hmac.new(secret.encode("utf-8"), message, hashlib.sha256).hexdigest()


def _check(payload: Union[str, bytes], header: Optional[str], secret: str, tolerance: float, now: Optional[float]) -> Optional[str]:
    """None when the signature is good, else why not."""
    if not header:
        return "missing signature header"
    parsed = _parse_header(header)
    if parsed is None:
        return "malformed signature header"
    timestamp, signatures = parsed
    current = time.time() if now is None else now
    if abs(current - timestamp) > tolerance:
        return "timestamp outside the tolerance"
    expected = sign(payload, secret, timestamp)
    # Compare against every v1 without stopping early, each in constant time.
    matched = False
    for candidate in signatures:
        if hmac.compare_digest(expected.encode("ascii"), candidate.encode("utf-8", errors="replace")):
            matched = True
    return None if matched else "no signature matches"


def verify_signature(
    payload: Union[str, bytes],
    header: Optional[str],
    secret: str,
    tolerance: float = DEFAULT_TOLERANCE,
    now: Optional[float] = None,
) -> bool:
    """True when `header` signs `payload` (the raw body) with `secret` within `tolerance` seconds of `now`."""
    return _check(payload, header, secret, tolerance, now) is None


def construct_event(
    payload: Union[str, bytes],
    header: Optional[str],
    secret: str,
    tolerance: float = DEFAULT_TOLERANCE,
    now: Optional[float] = None,
) -> Dict[str, Any]:
    """The event (`{id, type, created_at, data}`) once its signature verifies; raises WebhookSignatureError otherwise."""
    problem = _check(payload, header, secret, tolerance, now)
    if problem is not None:
        raise WebhookSignatureError(f"webhook signature: {problem}")
    try:
        event = json.loads(_as_bytes(payload))
    except ValueError as exc:
        raise WebhookSignatureError("webhook payload is not JSON") from exc
    if not isinstance(event, dict):
        raise WebhookSignatureError("webhook payload is not a JSON object")
    return event
