"""The transport: one HTTP exchange over urllib.request, transport failures mapped to SDK errors."""
from __future__ import annotations

import http.client
import socket
import urllib.error
import urllib.request
from typing import Any, Dict, Optional

from ._errors import APIConnectionError, APITimeoutError


class _KeepErrors(urllib.request.HTTPErrorProcessor):
    """Hands 4xx/5xx answers back like any other (the client turns them into typed errors)."""

    def http_response(self, request: urllib.request.Request, response: Any) -> Any:
        return response

    https_response = http_response


class RawResponse:
    """An answer whose body has not been read yet (streams read it line by line)."""

    __slots__ = ("status", "headers", "_fp")

    def __init__(self, status: int, headers: Dict[str, str], fp: Any) -> None:
        self.status = status
        self.headers = headers
        self._fp = fp

    def header(self, name: str) -> Optional[str]:
        lowered = name.lower()
        for key, value in self.headers.items():
            if key.lower() == lowered:
                return value
        return None

    def read(self) -> bytes:
        try:
            return self._fp.read()
        except socket.timeout as exc:
            raise APITimeoutError("timed out reading the answer") from exc
        except (http.client.HTTPException, OSError) as exc:
            raise APIConnectionError(f"connection broken while reading the answer: {exc}") from exc
        finally:
            self.close()

    def readline(self) -> bytes:
        return self._fp.readline()

    def close(self) -> None:
        try:
            self._fp.close()
        except Exception:  # closing a broken connection may fail; nothing to do then
            pass


class Transport:
    """Sends requests; replaceable (`Aegis(transport=...)`) for tests or custom networking."""

    def __init__(self) -> None:
        # Proxies from the environment, as urllib users expect; error answers returned, not raised.
        self._opener = urllib.request.build_opener(_KeepErrors())

    def send(self, method: str, url: str, headers: Dict[str, str], body: Optional[bytes], timeout: float) -> RawResponse:
        request = urllib.request.Request(url, data=body, headers=headers, method=method)
        try:
            response = self._opener.open(request, timeout=timeout)
        except urllib.error.HTTPError as exc:  # only from redirect handling; still an answer
            return RawResponse(exc.code, dict(exc.headers.items()), exc)
        except socket.timeout as exc:
            raise APITimeoutError(f"{method} {url}: timed out after {timeout} s") from exc
        except urllib.error.URLError as exc:
            if isinstance(exc.reason, socket.timeout):
                raise APITimeoutError(f"{method} {url}: timed out after {timeout} s") from exc
            raise APIConnectionError(f"{method} {url}: {exc.reason}") from exc
        except (http.client.HTTPException, OSError) as exc:
            raise APIConnectionError(f"{method} {url}: {exc!r}") from exc
        return RawResponse(response.status, dict(response.headers.items()), response)
