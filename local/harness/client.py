"""Call a Lambda HTTP handler the way API Gateway would, and read its answer like an HTTP client."""

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from local.harness.apigw import claims_for, http_event


@dataclass
class LambdaContext:
    function_name: str = "CommerceApiFunction"
    memory_limit_in_mb: int = 1024
    invoked_function_arn: str = "arn:aws:lambda:us-east-1:123456789012:function:CommerceApiFunction"
    aws_request_id: str = "test-request"

    @staticmethod
    def get_remaining_time_in_millis() -> int:
        return 10_000


@dataclass
class Answer:
    status: int
    headers: dict[str, str]
    text: str

    @property
    def json(self) -> Any:
        return json.loads(self.text) if self.text else None

    @property
    def content_type(self) -> str:
        return self.headers.get("Content-Type", self.headers.get("content-type", ""))


@dataclass
class ApiClient:
    """Sends payload-2.0 events to ``handler`` as user ``sub`` with ``groups`` (None = anonymous)."""

    handler: Callable[[dict[str, Any], Any], dict[str, Any]]
    sub: str | None = "U100"
    groups: tuple[str, ...] = ()
    default_headers: dict[str, str] = field(default_factory=dict)
    verified_email: str | None = None

    def as_user(self, sub: str | None, *groups: str, verified_email: str | None = None) -> "ApiClient":
        return ApiClient(self.handler, sub, groups, dict(self.default_headers), verified_email)

    def request(self, method: str, path: str, body: Any = None, **options: Any) -> Answer:
        headers = self.default_headers | (options.pop("headers", None) or {})
        claims = claims_for(self.sub, self.groups, self.verified_email)
        event = http_event(method, path, body=body, headers=headers, claims=claims, **options)
        raw = self.handler(event, LambdaContext())
        headers = dict(raw.get("headers") or {})
        for name, values in (raw.get("multiValueHeaders") or {}).items():
            headers.setdefault(name, values[-1])
        return Answer(raw["statusCode"], headers, raw.get("body") or "")

    def get(self, path: str, **options: Any) -> Answer:
        return self.request("GET", path, **options)

    def post(self, path: str, body: Any = None, **options: Any) -> Answer:
        return self.request("POST", path, body, **options)

    def patch(self, path: str, body: Any = None, **options: Any) -> Answer:
        return self.request("PATCH", path, body, **options)

    def put(self, path: str, body: Any = None, **options: Any) -> Answer:
        return self.request("PUT", path, body, **options)

    def delete(self, path: str, **options: Any) -> Answer:
        return self.request("DELETE", path, **options)
