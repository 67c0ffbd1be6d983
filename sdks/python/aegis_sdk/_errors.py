"""Typed errors: one class per HTTP status family, plus transport failures."""
from __future__ import annotations

from typing import Any, Dict, Mapping, Optional


class AegisError(Exception):
    """Any error the SDK raises. API errors carry the answer's `code`, `message`, `details`, status and request id."""

    status: Optional[int]
    code: Optional[str]
    message: str
    details: Dict[str, Any]
    request_id: Optional[str]
    headers: Dict[str, str]
    body: Any

    def __init__(
        self,
        message: str,
        *,
        status: Optional[int] = None,
        code: Optional[str] = None,
        details: Optional[Dict[str, Any]] = None,
        request_id: Optional[str] = None,
        headers: Optional[Mapping[str, str]] = None,
        body: Any = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.code = code
        self.details = details if details is not None else {}
        self.request_id = request_id
        self.headers = dict(headers) if headers is not None else {}
        self.body = body

    def __str__(self) -> str:
        parts = []
        if self.status is not None:
            parts.append(str(self.status))
        if self.code:
            parts.append(self.code)
        prefix = f"[{' '.join(parts)}] " if parts else ""
        suffix = f" (request {self.request_id})" if self.request_id else ""
        return f"{prefix}{self.message}{suffix}"


class APIError(AegisError):
    """The API answered with an error status."""


class BadRequestError(APIError):
    """400."""


class AuthenticationError(APIError):
    """401: the API key is missing, unknown or revoked."""


class PermissionDeniedError(APIError):
    """403: the key lacks the operation's scope."""


class NotFoundError(APIError):
    """404."""


class ConflictError(APIError):
    """409."""


class UnprocessableEntityError(APIError):
    """422: the request is well-formed but invalid; `details` says why (`fields`, `rows`)."""


#: The name the other SDKs use for 422.
ValidationError = UnprocessableEntityError


class RateLimitError(APIError):
    """429: retried automatically (honouring Retry-After) until `max_retries` is spent."""


class InternalServerError(APIError):
    """5xx."""


class APIConnectionError(AegisError):
    """The request never got an answer: connection refused, reset or dropped."""


class APITimeoutError(APIConnectionError):
    """No answer within the timeout."""


class WebhookSignatureError(AegisError):
    """A webhook's `X-Service-Signature` did not verify (missing, malformed, wrong or stale)."""


_BY_STATUS = {
    400: BadRequestError,
    401: AuthenticationError,
    403: PermissionDeniedError,
    404: NotFoundError,
    409: ConflictError,
    422: UnprocessableEntityError,
    429: RateLimitError,
}


def error_for_status(status: int, body: Any, headers: Mapping[str, str]) -> APIError:
    """The typed error for an error answer (`{"error": {"code", "message", "details"}}`)."""
    code: Optional[str] = None
    message = f"HTTP {status}"
    details: Dict[str, Any] = {}
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        err = body["error"]
        code = err.get("code") if isinstance(err.get("code"), str) else None
        message = err.get("message") if isinstance(err.get("message"), str) else message
        details = err.get("details") if isinstance(err.get("details"), dict) else {}
    elif isinstance(body, str) and body.strip():
        message = body.strip()[:500]
    cls = _BY_STATUS.get(status) or (InternalServerError if status >= 500 else APIError)
    lowered = {k.lower(): v for k, v in headers.items()}
    return cls(message, status=status, code=code, details=details, request_id=lowered.get("x-request-id"), headers=headers, body=body)
