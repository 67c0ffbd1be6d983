"""Small helpers shared by the generated and hand-written layers."""
from __future__ import annotations

import email.utils
import random
import time
from typing import Any, Dict, List, Mapping, Optional, Tuple
from urllib.parse import quote


def path_segment(value: Any) -> str:
    """A path parameter, percent-encoded so an id can never change the route."""
    return quote(str(value), safe="")


def query_pairs(query: Optional[Mapping[str, Any]]) -> List[Tuple[str, str]]:
    """Query parameters as sent: unset ones left out, booleans `true`/`false`, lists comma-separated."""
    pairs: List[Tuple[str, str]] = []
    if not query:
        return pairs
    for key, value in query.items():
        if value is None:
            continue
        if isinstance(value, bool):
            pairs.append((key, "true" if value else "false"))
        elif isinstance(value, (list, tuple)):
            pairs.append((key, ",".join(str(v) for v in value)))
        else:
            pairs.append((key, str(value)))
    return pairs


MAX_BACKOFF = 8.0
MAX_RETRY_AFTER = 60.0


def backoff_delay(attempt: int) -> float:
    """0.5 s × 2^attempt with full jitter on its upper half, capped at 8 s."""
    base = min(MAX_BACKOFF, 0.5 * (2 ** attempt))
    return base / 2 + random.random() * base / 2


def retry_after_delay(headers: Mapping[str, str], now: Optional[float] = None) -> Optional[float]:
    """Seconds to wait from `Retry-After` (delta-seconds or an HTTP date), if the answer sent one."""
    value: Optional[str] = None
    for key, v in headers.items():
        if key.lower() == "retry-after":
            value = v
            break
    if value is None:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
        if when is None:
            return None
        seconds = when.timestamp() - (time.time() if now is None else now)
    if seconds != seconds:  # NaN
        return None
    return max(0.0, min(MAX_RETRY_AFTER, seconds))


def lower_keys(headers: Mapping[str, str]) -> Dict[str, str]:
    return {k.lower(): v for k, v in headers.items()}
