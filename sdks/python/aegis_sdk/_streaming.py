"""Server-sent events: the live decision stream, resumed with Last-Event-ID when the connection breaks."""
from __future__ import annotations

import http.client
import json
import threading
from typing import TYPE_CHECKING, Any, Callable, Dict, Generic, Iterator, List, Optional, TypeVar

from ._errors import APIConnectionError
from ._options import RequestOptions
from ._util import backoff_delay

if TYPE_CHECKING:
    from ._base import BaseClient
    from ._http import RawResponse

T = TypeVar("T")


class ServerSentEvent:
    """One event as parsed from the stream."""

    __slots__ = ("event", "data", "id", "retry")

    def __init__(self, event: str, data: str, id: Optional[str], retry: Optional[int]) -> None:
        self.event = event
        self.data = data
        self.id = id
        self.retry = retry

    def json(self) -> Any:
        return json.loads(self.data)

    def __repr__(self) -> str:
        return f"ServerSentEvent(event={self.event!r}, id={self.id!r}, data={self.data[:80]!r})"


def parse_events(lines: Iterator[bytes]) -> Iterator[ServerSentEvent]:
    """The text/event-stream format: fields until a blank line; `:` lines are comments (heartbeats)."""
    event = ""
    data: List[str] = []
    event_id: Optional[str] = None
    retry: Optional[int] = None
    seen = False
    for raw in lines:
        line = raw.decode("utf-8").rstrip("\r\n")
        if not line:
            if seen:
                yield ServerSentEvent(event or "message", "\n".join(data), event_id, retry)
            event, data, event_id, retry, seen = "", [], None, None, False
            continue
        if line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        if value.startswith(" "):
            value = value[1:]
        if name == "event":
            event, seen = value, True
        elif name == "data":
            data.append(value)
            seen = True
        elif name == "id":
            if "\0" not in value:
                event_id, seen = value, True
        elif name == "retry":
            if value.isdigit():
                retry = int(value)


class EventStream(Generic[T]):
    """An iterator of the stream's decisions (the JSON of each `decision` event).

    Heartbeats are skipped; `dropped` events (the server skipped decisions because this client read
    too slowly) are counted in `dropped` and passed to `on_dropped`. When the connection breaks or
    ends, it reconnects with `Last-Event-ID` set to the last id seen, so nothing is missed or
    repeated; after `max_retries` reconnections in a row that receive nothing it raises
    `APIConnectionError`. Close it with `close()` or use it as a context manager.
    """

    def __init__(
        self,
        client: "BaseClient",
        url: str,
        headers: Dict[str, str],
        options: RequestOptions,
        last_event_id: Optional[str] = None,
        on_dropped: Optional[Callable[[Dict[str, Any]], None]] = None,
    ) -> None:
        self._client = client
        self._url = url
        self._headers = headers
        self._options = options
        #: The id of the last event received: where a reconnection resumes.
        self.last_event_id = last_event_id
        #: How many decisions the server reported dropped (`event: dropped`).
        self.dropped = 0
        #: How many times the stream reconnected.
        self.reconnects = 0
        self._on_dropped = on_dropped
        self._response: Optional["RawResponse"] = None
        self._closed = threading.Event()
        self._iterator: Optional[Iterator[T]] = None

    def __iter__(self) -> Iterator[T]:
        return self

    def __next__(self) -> T:
        if self._iterator is None:
            self._iterator = self._run()
        return next(self._iterator)

    def __enter__(self) -> "EventStream[T]":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    @property
    def closed(self) -> bool:
        return self._closed.is_set()

    def close(self) -> None:
        """Stops the stream; an iteration in progress ends (closing the connection wakes a blocked read)."""
        self._closed.set()
        response = self._response
        if response is not None:
            response.close()

    def _run(self) -> Iterator[T]:
        failures = 0
        max_retries = self._options.get("max_retries", self._client.max_retries)
        delay_ms: Optional[int] = None
        while not self._closed.is_set():
            # Opening already retries per the client's policy; errors like 404 or 401 end the stream.
            response = self._client._open_stream(self._url, self._headers, self._options, self.last_event_id)
            self._response = response
            received = False
            try:
                for event in parse_events(iter(response.readline, b"")):
                    if event.retry is not None:
                        delay_ms = event.retry
                    if event.id:
                        self.last_event_id = event.id
                    received = True
                    if event.event == "dropped":
                        info = _json_or_empty(event.data)
                        info = info if isinstance(info, dict) else {}
                        self.dropped += int(info.get("count", 1) or 1)
                        if self._on_dropped is not None:
                            self._on_dropped(info)
                        continue
                    if event.event in ("decision", "message") and event.data:
                        yield json.loads(event.data)
                    if self._closed.is_set():
                        return
            except (OSError, ValueError, AttributeError, http.client.HTTPException):
                # A broken connection, a read timeout, or the socket closed under us by close():
                # reconnect (resuming after last_event_id) unless the caller closed the stream.
                if self._closed.is_set():
                    return
            finally:
                response.close()
                self._response = None
            if self._closed.is_set():
                return
            failures = 0 if received else failures + 1
            if failures > max_retries:
                raise APIConnectionError(f"live stream: {failures} reconnections in a row received nothing")
            self.reconnects += 1
            self._client._sleep(delay_ms / 1000 if delay_ms is not None else backoff_delay(max(0, failures - 1)))


def _json_or_empty(data: str) -> Any:
    try:
        return json.loads(data) if data else {}
    except ValueError:
        return {}

