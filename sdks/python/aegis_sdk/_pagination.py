"""Cursor pages: `{data: [...], pagination: {next}}`, iterable across every page."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, Generic, Iterator, List, Optional, TypeVar

from ._options import RequestOptions

if TYPE_CHECKING:
    from ._base import BaseClient

T = TypeVar("T")


class SyncPage(Generic[T]):
    """One page of a list. Iterating over it yields every item of this page and of the pages after it,
    fetching each next page only when the previous one is used up."""

    data: List[T]
    pagination: Dict[str, Any]

    def __init__(self, client: "BaseClient", path: str, query: Dict[str, Any], options: RequestOptions, body: Any) -> None:
        self._client = client
        self._path = path
        self._query = query
        self._options = options
        body = body if isinstance(body, dict) else {}
        self.data = body.get("data") or []
        self.pagination = body.get("pagination") or {}

    @property
    def next_cursor(self) -> Optional[str]:
        cursor = self.pagination.get("next")
        return cursor if isinstance(cursor, str) and cursor else None

    def has_next_page(self) -> bool:
        return self.next_cursor is not None

    def next_page(self) -> Optional["SyncPage[T]"]:
        """The page after this one, or None on the last page."""
        cursor = self.next_cursor
        if cursor is None:
            return None
        return self._client._get_page(self._path, {**self._query, "cursor": cursor}, self._options)

    def iter_pages(self) -> Iterator["SyncPage[T]"]:
        """This page and every page after it."""
        page: Optional[SyncPage[T]] = self
        while page is not None:
            yield page
            page = page.next_page()

    def __iter__(self) -> Iterator[T]:
        page: Optional[SyncPage[T]] = self
        while page is not None:
            yield from page.data
            page = page.next_page()

    auto_paging_iter = __iter__

    def __repr__(self) -> str:
        return f"<SyncPage {self._path} items={len(self.data)} next={self.next_cursor!r}>"
