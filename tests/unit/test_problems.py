"""Domain errors → application/problem+json (RFC 9457), from the one table that also feeds OpenAPI."""

import inspect
from http import HTTPStatus

import pytest

from shopfeed.commerce import errors as commerce_errors
from shopfeed.platform import errors, problems
from shopfeed.platform.problems import PROBLEM_JSON, PROBLEMS, Problem

DOMAIN_ERRORS = [
    cls
    for module in (errors, commerce_errors)
    for _, cls in inspect.getmembers(module, inspect.isclass)
    if issubclass(cls, errors.DomainError) and cls is not errors.DomainError
]


@pytest.mark.parametrize("error", DOMAIN_ERRORS, ids=lambda cls: cls.__name__)
def test_every_domain_error_has_its_own_problem_mapping(error: type[errors.DomainError]) -> None:
    assert error in PROBLEMS


def test_every_problem_type_is_distinct() -> None:
    slugs = [spec.slug for spec in PROBLEMS.values()]
    assert len(set(slugs)) == len(slugs)


def test_a_problem_body_has_the_rfc_members_and_the_errors_data() -> None:
    # given
    error = commerce_errors.InsufficientStock([commerce_errors.StockShortage("P-RED-TSHIRT", requested=3, available=1)])
    # when
    status, body = problems.body_for(error)
    # then
    assert status == HTTPStatus.CONFLICT
    assert Problem.model_validate(body).model_dump() == {
        "type": "https://shopfeed.dev/problems/insufficient-stock",
        "title": "Insufficient stock",
        "status": 409,
        "detail": error.detail,
    }
    assert body["products"] == [{"product_id": "P-RED-TSHIRT", "requested": 3, "available": 1}]


@pytest.mark.parametrize(
    ("error", "status"),
    [
        (errors.Unauthenticated(), 401),
        (errors.Forbidden("list orders"), 403),
        (errors.NotFound("order", "O1"), 404),
        (commerce_errors.UnknownProducts(["P-GHOST"]), 404),
        (errors.AlreadyExists("email", "ada@example.com"), 409),
        (errors.InvalidRequest("Mixed currencies."), 422),
        (errors.InvalidCursor(), 400),
        (errors.MissingIdempotencyKey(), 400),
        (errors.IdempotencyKeyReused("k-1"), 422),
        (errors.PreconditionRequired(), 428),
        (errors.StaleVersion("product", "P-1", 4), 412),
        (errors.InvalidTransition("order", "O1", "Shipped", "Cancelled"), 409),
        (commerce_errors.PriceChanged([commerce_errors.PriceChange("P-1", {"amount": 1}, {"amount": 2})]), 409),
        (errors.Contention("order O1"), 409),
        (errors.DependencyUnavailable(retry_after=2), 503),
    ],
    ids=lambda value: type(value).__name__ if isinstance(value, Exception) else str(value),
)
def test_each_error_answers_its_status_with_a_consistent_body(error: errors.DomainError, status: int) -> None:
    # when
    answered, body = problems.body_for(error)
    # then
    assert (answered, body["status"]) == (status, status)
    assert body["detail"] == error.detail
    assert body["type"].endswith("/" + problems.spec_for(error).slug)
    assert body.items() >= error.extensions().items()


def test_an_unmapped_error_is_a_programming_error_not_a_500_in_disguise() -> None:
    class Unmapped(errors.DomainError):
        pass

    with pytest.raises(LookupError, match="Unmapped"):
        problems.spec_for(Unmapped("oops"))


def test_a_subclass_of_a_mapped_error_inherits_its_mapping() -> None:
    class MissingOrder(errors.NotFound):
        pass

    assert problems.spec_for(MissingOrder("order", "O1")) == PROBLEMS[errors.NotFound]


def test_documented_responses_group_errors_by_status_and_always_include_401_403_422_and_503() -> None:
    # when
    responses = problems.problem_responses(
        errors.NotFound, commerce_errors.UnknownProducts, errors.InvalidRequest, errors.Unauthenticated
    )
    # then
    assert list(responses) == [200, 401, 403, 404, 422, 503]
    assert responses[503]["description"] == "Temporarily unavailable"
    assert responses[401]["description"] == "Authentication required"
    assert responses[403]["description"] == "Unusable token subject"
    assert responses[404]["description"] == "Resource not found; Unknown products"
    assert responses[422]["description"] == "Request validation failed; Invalid request"
    assert all(list(responses[status]["content"]) == [PROBLEM_JSON] for status in (401, 403, 404, 422))


def test_documented_responses_name_the_success_status_of_a_create() -> None:
    # when
    responses = problems.problem_responses(errors.AlreadyExists, ok=201)
    # then
    assert list(responses) == [201, 401, 403, 409, 422, 503]
    assert "content" not in responses[201]  # its schema comes from the route's return type
