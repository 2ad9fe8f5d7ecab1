"""Rotating the cursor key (docs/operations.md): a page's cursor signed before a rotation still reads
the next page after it, and is refused once the old key is retired. Each step is a new container."""

import json

import boto3
import pytest

from local.harness.client import ApiClient
from local.harness.factories import create_products
from tests.conftest import reset_caches


def test_a_cursor_outlives_the_rotation_of_its_key_until_the_key_is_retired(
    admin: ApiClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    # given products, and containers reading the cursor key from Secrets Manager as deployed
    create_products(admin, 3, category="tshirts")
    secrets = boto3.client("secretsmanager")
    arn = secrets.create_secret(Name="RotatedCursorSecret", SecretString="old-key")["ARN"]
    monkeypatch.delenv("CURSOR_SECRET")
    monkeypatch.setenv("CURSOR_SECRET_ARN", arn)

    def new_container() -> ApiClient:
        reset_caches()
        from functions.commerce_api.app import lambda_handler

        return ApiClient(lambda_handler).as_user("U100")

    def page(client: ApiClient, cursor: str | None) -> tuple[int, dict[str, object]]:
        query = {"category": "tshirts", "limit": 1} | ({"cursor": cursor} if cursor else {})
        answer = client.get("/products", query=query)
        return answer.status, answer.json

    # and a first page read before the rotation
    status, first = page(new_container(), None)
    assert status == 200
    cursor = str(first["next_cursor"])

    # when the key rotates: the new key accepted, then signing, the old one still accepted
    secrets.put_secret_value(SecretId=arn, SecretString=json.dumps({"current": "old-key", "accepted": ["new-key"]}))
    secrets.put_secret_value(SecretId=arn, SecretString=json.dumps({"current": "new-key", "accepted": ["old-key"]}))
    rotated = new_container()

    # then the cursor signed before the rotation reads the next page, and the next cursor is signed anew
    status, second = page(rotated, cursor)
    assert status == 200
    assert [item["product_id"] for item in second["items"]] == ["P-ITEM-02"]  # type: ignore[index]

    # when the old key is retired
    secrets.put_secret_value(SecretId=arn, SecretString=json.dumps({"current": "new-key"}))
    retired = new_container()

    # then the old cursor is refused, and the one signed after the rotation still reads on
    status, refused = page(retired, cursor)
    assert (status, refused["type"]) == (400, "https://shopfeed.dev/problems/invalid-cursor")
    status, third = page(retired, str(second["next_cursor"]))
    assert status == 200
    assert [item["product_id"] for item in third["items"]] == ["P-ITEM-03"]  # type: ignore[index]
