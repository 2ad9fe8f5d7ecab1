"""Every resolver build_resolver makes reads bodies through the one guard: a new context's routes too."""

from typing import Any

import pytest
from aws_lambda_powertools.event_handler.api_gateway import Router
from pydantic import BaseModel

from local.harness.apigw import claims_for, http_event
from local.harness.client import LambdaContext
from shopfeed.platform.http import build_resolver


class Post(BaseModel):
    text: str


def feed_resolver() -> Any:
    """A resolver of a context that does not exist yet: one route with a body, one without."""
    router = Router()

    @router.post("/posts")
    def create_post(body: Post) -> dict[str, Any]:
        return {"text": body.text}

    @router.post("/posts/<post_id>/like")
    def like(post_id: str) -> dict[str, Any]:
        return {"liked": post_id}

    return build_resolver(router)


@pytest.mark.parametrize(
    ("path", "content_type", "body", "status"),
    [
        ("/posts", "application/json", '{"text": "hello"}', 200),
        ("/posts", "Application/JSON; charset=UTF-8", '{"text": "hello"}', 200),
        ("/posts", "multipart/form-data", "--x", 415),
        ("/posts", "application/json", '{"text": ' + "1" * 4301 + "}", 400),
        ("/posts", "application/json", "[]", 400),
        ("/posts/P1/like", "text/plain", "hello", 415),
        ("/posts/P1/like", "application/json", "{", 400),
        ("/posts/P1/like", "application/json", "", 200),
    ],
)
def test_a_new_contexts_routes_inherit_the_request_guard(path: str, content_type: str, body: str, status: int) -> None:
    # given
    app = feed_resolver()
    event = http_event("POST", path, raw_body=body, headers={"Content-Type": content_type}, claims=claims_for("U1"))

    # when
    answer = app.resolve(event, LambdaContext())

    # then
    assert answer["statusCode"] == status, answer["body"]
    if status >= 400:
        assert answer["headers"]["Content-Type"] == "application/problem+json"
