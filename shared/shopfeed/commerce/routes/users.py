from typing import Annotated, Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Path

from shopfeed.commerce import services
from shopfeed.commerce.routes import Store
from shopfeed.commerce.schemas import RegisterUser, UpdateProfile, UserView
from shopfeed.platform import errors
from shopfeed.platform.http import CurrentCaller, json_response
from shopfeed.platform.observability import metrics
from shopfeed.platform.parameters import IfMatch
from shopfeed.platform.problems import problem_responses
from shopfeed.platform.types import UserId
from shopfeed.platform.versioning import expected_version

router = Router()


@router.post(
    "/users",
    summary="Register me (the token's subject) as a customer, with the token's verified email if it has one",
    status_code=201,
    responses=problem_responses(errors.AlreadyExists, errors.EmailInUse, errors.InvalidRequest, ok=201),
    tags=["users"],
)
def register(body: RegisterUser, caller: CurrentCaller, store: Store) -> Response[UserView]:
    customer = services.register_customer(store, caller, body.email, body.name)
    metrics.add_metric(name="UserRegistered", unit="Count", value=1)
    return json_response(
        UserView.of(customer, private=True), 201, customer.version, {"Location": f"/users/{customer.user_id}"}
    )


@router.get(
    "/users/<user_id>",
    summary="Get a user (ECOM-001); email only for the user themself and admins; 'me' is the caller",
    responses=problem_responses(errors.NotFound),
    tags=["users"],
)
def get_user(user_id: Annotated[UserId, Path()], caller: CurrentCaller, store: Store) -> Response[UserView]:
    customer, private = services.read_customer(store, caller, caller.user_id if user_id == "me" else user_id)
    return json_response(UserView.of(customer, private), version=customer.version if private else None)


@router.patch(
    "/users/me",
    summary="Update my profile (If-Match required)",
    responses=problem_responses(errors.NotFound, errors.PreconditionRequired, errors.StaleVersion),
    tags=["users"],
)
def update_me(body: UpdateProfile, caller: CurrentCaller, store: Store, if_match: IfMatch = None) -> Response[UserView]:
    version = expected_version(if_match)
    changes: dict[str, Any] = body.model_dump(exclude_none=True)
    customer = services.update_my_profile(store, caller, version, changes)
    return json_response(UserView.of(customer, private=True), version=customer.version)
