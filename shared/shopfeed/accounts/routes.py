"""HTTP routes of a user (both halves), served by the commerce API function."""

from typing import Annotated

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.depends import Depends
from aws_lambda_powertools.event_handler.openapi.params import Path

from shopfeed.accounts import services
from shopfeed.accounts.bootstrap import accounts
from shopfeed.accounts.schemas import RegisterUser, UpdateProfile, UserView
from shopfeed.accounts.services import Users
from shopfeed.platform import errors
from shopfeed.platform.http import CurrentCaller, json_response
from shopfeed.platform.observability import metrics
from shopfeed.platform.parameters import IfMatch
from shopfeed.platform.problems import problem_responses
from shopfeed.platform.types import UserId
from shopfeed.platform.versioning import expected_version

router = Router()
# The accounts as a route depends on them: declared here, not in the composition root, so the sign-up
# trigger that shares the root does not import Powertools' HTTP resolver.
UsersStore = Annotated[Users, Depends(accounts)]


@router.post(
    "/users",
    summary="Register me (the token's subject): customer and social profile, unique email and handle, one transaction",
    status_code=201,
    responses=problem_responses(errors.AlreadyExists, errors.EmailInUse, errors.InvalidRequest, ok=201),
    tags=["users"],
)
def register(body: RegisterUser, caller: CurrentCaller, users: UsersStore) -> Response[UserView]:
    customer, profile = services.register_user(
        users, caller, body.email, body.name, body.handle, body.display_name, body.bio
    )
    metrics.add_metric(name="UserRegistered", unit="Count", value=1)
    return json_response(
        UserView.of(customer, profile, private=True), 201, customer.version, {"Location": f"/users/{customer.user_id}"}
    )


@router.get(
    "/users/<user_id>",
    summary="Get a user (ECOM-001, FEED-001: one BatchGetItem across both tables); name and email only for the "
    "user themself and admins; 'me' is the caller",
    responses=problem_responses(errors.NotFound),
    tags=["users"],
)
def get_user(user_id: Annotated[UserId, Path()], caller: CurrentCaller, users: UsersStore) -> Response[UserView]:
    customer, profile, private = services.read_user(users, caller, caller.user_id if user_id == "me" else user_id)
    return json_response(UserView.of(customer, profile, private), version=customer.version if private else None)


@router.patch(
    "/users/me",
    summary="Update my profile, customer and social fields (If-Match required)",
    responses=problem_responses(errors.NotFound, errors.PreconditionRequired, errors.StaleVersion),
    tags=["users"],
)
def update_me(
    body: UpdateProfile, caller: CurrentCaller, users: UsersStore, if_match: IfMatch = None
) -> Response[UserView]:
    version = expected_version(if_match)
    customer, profile = services.update_me(users, caller, version, body.customer_changes(), body.profile_changes())
    return json_response(UserView.of(customer, profile, private=True), version=customer.version)
