"""The client: configuration plus every generated namespace."""
from __future__ import annotations

from typing import Mapping, Optional

from ._base import BaseClient
from ._generated.resources import Resources
from ._http import Transport


class Aegis(BaseClient, Resources):
    """A client of the Aegis API.

    Args:
        api_key: The API key (`svc_live_…`); defaults to `AEGIS_API_KEY`.
        base_url: The API's URL; defaults to `AEGIS_API_URL`, else `http://localhost:3000`.
        max_retries: Retries of a request answered 429/502/503/504 or failing to connect (0 disables).
        timeout: Seconds to wait for an answer.
        headers: Headers sent with every request.
    """

    def __init__(
        self,
        api_key: Optional[str] = None,
        base_url: Optional[str] = None,
        max_retries: int = 2,
        timeout: float = 60.0,
        headers: Optional[Mapping[str, str]] = None,
        transport: Optional[Transport] = None,
    ) -> None:
        super().__init__(api_key=api_key, base_url=base_url, max_retries=max_retries, timeout=timeout, headers=headers, transport=transport)
        self._init_resources(self)

    def with_options(self, *, max_retries: Optional[int] = None, timeout: Optional[float] = None) -> "Aegis":
        """A copy of this client with other retry or timeout settings."""
        return Aegis(
            api_key=self.api_key,
            base_url=self.base_url,
            max_retries=self.max_retries if max_retries is None else max_retries,
            timeout=self.timeout if timeout is None else timeout,
            headers=self.default_headers,
            transport=self._transport,
        )

    def __repr__(self) -> str:
        return f"<Aegis {self.base_url}>"
