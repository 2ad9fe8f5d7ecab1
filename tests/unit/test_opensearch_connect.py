"""How the OpenSearch adapter reaches its engine: SigV4 to AWS endpoints, plain HTTP to local ones."""

import socket

import pytest

from shopfeed.commerce.catalog.search import PRODUCTS
from shopfeed.platform.search import SearchQuery, SearchUnavailable
from shopfeed.platform.search.opensearch import connect

DOMAIN = "search-shopfeed-dev-abc123.us-east-1.es.amazonaws.com"


def signed_headers(endpoint: str, service: str = "es") -> dict[str, str]:
    connection = connect(endpoint, service)._client.transport.get_connection()
    if connection.http_auth is None:
        return {}
    return dict(connection.http_auth("GET", f"{connection.host}/products/_search", b"{}"))


@pytest.mark.parametrize("service", ["es", "aoss"])
def test_an_aws_endpoint_is_signed_with_the_function_credentials_for_its_service(service: str) -> None:
    # when: a bare host, as CloudFormation's DomainEndpoint gives it
    headers = signed_headers(DOMAIN, service)
    # then
    assert headers["Authorization"].startswith("AWS4-HMAC-SHA256 Credential=testing/")
    assert f"/us-east-1/{service}/aws4_request" in headers["Authorization"]
    assert headers["X-Amz-Security-Token"] == "testing"


def test_a_local_engine_over_plain_http_is_not_signed() -> None:
    # when
    headers = signed_headers("http://127.0.0.1:9200")
    # then
    assert headers == {}


def test_an_unknown_signing_service_is_refused() -> None:
    # when / then
    with pytest.raises(ValueError, match="signing service"):
        connect(f"https://{DOMAIN}", "s3")


def test_a_warm_up_against_an_engine_that_refuses_connections_raises_nothing() -> None:
    # given an endpoint where nothing listens (a port just bound, then closed)
    with socket.create_server(("127.0.0.1", 0)) as closed:
        endpoint = f"http://127.0.0.1:{closed.getsockname()[1]}"
    engine = connect(endpoint, timeout=1, retries=1)
    # when init warms the engine up: then it goes on (the first search meets the refusal, and reports it)
    engine.warm_up(PRODUCTS)
    with pytest.raises(SearchUnavailable):
        engine.search(PRODUCTS, SearchQuery("shirt", ("name",), 10, {}, None))
