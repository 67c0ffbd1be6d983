"""Per-request options."""
from __future__ import annotations

from typing import Dict, Optional, TypedDict


class RequestOptions(TypedDict, total=False):
    """Options any method takes as `request_options=` (or as the matching keyword argument)."""

    #: Sent as `Idempotency-Key` on a mutation (else a random one is generated); reused on retries.
    idempotency_key: str
    #: Sent as `X-Request-Id`; the answer's request id is on errors as `request_id`.
    request_id: str
    #: Seconds to wait for an answer (connect and each read), instead of the client's timeout.
    timeout: float
    #: Extra headers for this request.
    headers: Dict[str, str]
    #: Retries for this request, instead of the client's `max_retries`.
    max_retries: int


def merge_options(
    options: Optional[RequestOptions] = None,
    *,
    idempotency_key: Optional[str] = None,
    request_id: Optional[str] = None,
    timeout: Optional[float] = None,
    headers: Optional[Dict[str, str]] = None,
) -> RequestOptions:
    """`request_options` with the keyword shortcuts laid over it."""
    merged: RequestOptions = dict(options) if options else {}  # type: ignore[assignment]
    if idempotency_key is not None:
        merged["idempotency_key"] = idempotency_key
    if request_id is not None:
        merged["request_id"] = request_id
    if timeout is not None:
        merged["timeout"] = timeout
    if headers:
        merged["headers"] = {**merged.get("headers", {}), **headers}
    return merged
