"""The request loop every method goes through: headers, idempotency keys, retries, typed errors."""
from __future__ import annotations

import json as _json
import os
import time
import uuid
from typing import Any, Callable, Dict, Mapping, Optional, Union
from urllib.parse import urlencode

from ._errors import AegisError, APIConnectionError, error_for_status
from ._http import RawResponse, Transport
from ._options import RequestOptions
from ._pagination import SyncPage
from ._streaming import EventStream
from ._util import backoff_delay, query_pairs, retry_after_delay
from ._version import __version__

DEFAULT_BASE_URL = "http://localhost:3000"
RETRYABLE_STATUSES = frozenset({429, 502, 503, 504})
_MISSING: Any = object()


class BaseClient:
    """Configuration and transport shared by every resource namespace."""

    api_key: str
    base_url: str
    max_retries: int
    timeout: float

    def __init__(
        self,
        api_key: Optional[str] = None,
        base_url: Optional[str] = None,
        max_retries: int = 2,
        timeout: float = 60.0,
        headers: Optional[Mapping[str, str]] = None,
        transport: Optional[Transport] = None,
    ) -> None:
        key = api_key if api_key is not None else os.environ.get("AEGIS_API_KEY")
        if not key:
            raise AegisError("No API key: pass api_key= or set AEGIS_API_KEY.")
        self.api_key = key
        self.base_url = (base_url or os.environ.get("AEGIS_API_URL") or DEFAULT_BASE_URL).rstrip("/")
        if max_retries < 0:
            raise ValueError("max_retries must be >= 0")
        self.max_retries = max_retries
        self.timeout = timeout
        self.default_headers: Dict[str, str] = dict(headers or {})
        self._transport = transport or Transport()
        #: Waits between retries go through this (tests may replace it).
        self._sleep: Callable[[float], None] = time.sleep

    # -----------------------------------------------------------------------------------------
    def _url(self, path: str, query: Optional[Mapping[str, Any]]) -> str:
        pairs = query_pairs(query)
        return f"{self.base_url}{path}?{urlencode(pairs)}" if pairs else f"{self.base_url}{path}"

    def _headers(self, options: RequestOptions, accept: str) -> Dict[str, str]:
        headers = {
            "Authorization": f"Bearer {self.api_key}",
            "Accept": accept,
            "User-Agent": f"aegis-sdk-python/{__version__}",
        }
        headers.update(self.default_headers)
        request_id = options.get("request_id")
        if request_id:
            headers["X-Request-Id"] = request_id
        headers.update(options.get("headers") or {})
        return headers

    def _send(
        self,
        method: str,
        url: str,
        headers: Dict[str, str],
        data: Optional[bytes],
        options: RequestOptions,
    ) -> RawResponse:
        """One request with its retries; answers with an error status raise typed errors."""
        max_retries = options.get("max_retries", self.max_retries)
        timeout = options.get("timeout", self.timeout)
        attempt = 0
        while True:
            try:
                response = self._transport.send(method, url, headers, data, timeout)
            except APIConnectionError:
                # Connection errors and timeouts: the request may or may not have run; a mutation
                # is safe to resend because its Idempotency-Key is the same.
                if attempt >= max_retries:
                    raise
                self._sleep(backoff_delay(attempt))
                attempt += 1
                continue
            status = response.status
            if status < 400:
                return response
            if status in RETRYABLE_STATUSES and attempt < max_retries:
                delay = retry_after_delay(response.headers)
                response.close()
                self._sleep(backoff_delay(attempt) if delay is None else delay)
                attempt += 1
                continue
            raw = response.read()
            raise error_for_status(status, _decode(raw, response.header("content-type")), response.headers)

    def _request(
        self,
        method: str,
        path: str,
        *,
        query: Optional[Mapping[str, Any]] = None,
        headers: Optional[Mapping[str, Optional[str]]] = None,
        json: Any = _MISSING,
        content: Optional[Union[str, bytes]] = None,
        content_type: Optional[str] = None,
        options: Optional[RequestOptions] = None,
        mutating: bool = False,
        body_required: bool = False,
    ) -> Any:
        options = options or {}
        request_headers = self._headers(options, "application/json")
        for name, value in (headers or {}).items():
            if value is not None:
                request_headers[name] = value
        data: Optional[bytes] = None
        if content is not None:
            data = content.encode("utf-8") if isinstance(content, str) else bytes(content)
            request_headers["Content-Type"] = content_type or "application/octet-stream"
        elif json is not _MISSING and json is not None:
            data = _json.dumps(json, separators=(",", ":")).encode("utf-8")
            request_headers["Content-Type"] = "application/json"
        elif body_required:
            raise TypeError("pass either a JSON body or content= (with content_type=)")
        if mutating:
            # Generated once per call, so every retry of it carries the same key.
            request_headers["Idempotency-Key"] = options.get("idempotency_key") or str(uuid.uuid4())
        response = self._send(method, self._url(path, query), request_headers, data, options)
        if response.status == 204:
            response.close()
            return None
        return _decode(response.read(), response.header("content-type"))

    def _get_page(self, path: str, query: Optional[Dict[str, Any]], options: RequestOptions) -> SyncPage[Any]:
        query = dict(query or {})
        body = self._request("GET", path, query=query, options=options)
        return SyncPage(self, path, query, options, body)

    def _stream(
        self,
        path: str,
        query: Optional[Dict[str, Any]],
        headers: Optional[Dict[str, Optional[str]]],
        options: RequestOptions,
        on_dropped: Optional[Callable[[Dict[str, Any]], None]] = None,
    ) -> EventStream[Any]:
        last_event_id: Optional[str] = None
        extra: Dict[str, str] = {}
        for name, value in (headers or {}).items():
            if value is None:
                continue
            if name.lower() == "last-event-id":
                last_event_id = value
            else:
                extra[name] = value
        return EventStream(self, self._url(path, query), extra, options, last_event_id, on_dropped)

    def _open_stream(self, url: str, extra: Dict[str, str], options: RequestOptions, last_event_id: Optional[str]) -> RawResponse:
        headers = self._headers(options, "text/event-stream")
        headers.update(extra)
        headers["Cache-Control"] = "no-cache"
        if last_event_id:
            headers["Last-Event-ID"] = last_event_id
        return self._send("GET", url, headers, None, options)


def _decode(raw: bytes, content_type: Optional[str]) -> Any:
    """JSON answers parsed (one decode per answer); anything else returned as text."""
    if not raw:
        return None
    if content_type is None or "json" in content_type:
        try:
            return _json.loads(raw)
        except ValueError:
            pass  # a proxy's error page or a truncated body: hand back the text
    return raw.decode("utf-8", errors="replace")
