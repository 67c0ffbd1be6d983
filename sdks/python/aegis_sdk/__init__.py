"""The Aegis API's Python SDK.

    from aegis_sdk import Aegis
    client = Aegis()  # AEGIS_API_KEY, AEGIS_API_URL
    site = client.shield_sites.create({"domain": "shop.example.com", "origin_url": "https://origin.example.com", "mode": "block"})
"""
from . import webhooks
from ._client import Aegis
from ._errors import (
    AegisError,
    APIConnectionError,
    APIError,
    APITimeoutError,
    AuthenticationError,
    BadRequestError,
    ConflictError,
    InternalServerError,
    NotFoundError,
    PermissionDeniedError,
    RateLimitError,
    UnprocessableEntityError,
    ValidationError,
    WebhookSignatureError,
)
from ._generated import API_VERSION, OPERATIONS
from ._generated import models as types
from ._options import RequestOptions
from ._pagination import SyncPage
from ._streaming import EventStream, ServerSentEvent
from ._version import __version__

__all__ = [
    "Aegis",
    "AegisError",
    "APIError",
    "APIConnectionError",
    "APITimeoutError",
    "AuthenticationError",
    "BadRequestError",
    "ConflictError",
    "InternalServerError",
    "NotFoundError",
    "PermissionDeniedError",
    "RateLimitError",
    "UnprocessableEntityError",
    "ValidationError",
    "WebhookSignatureError",
    "RequestOptions",
    "SyncPage",
    "EventStream",
    "ServerSentEvent",
    "API_VERSION",
    "OPERATIONS",
    "types",
    "webhooks",
    "__version__",
]
