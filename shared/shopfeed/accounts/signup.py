"""A user who signs up in the stack's Cognito user pool gets their records at confirmation: the same
registration as ``POST /users`` (customer and social profile, one transaction), made by the pool's
post-confirmation trigger so a new user can order and post at once.

Cognito retries a trigger that fails or times out, and a trigger error fails the confirmation the user
is waiting on: whatever the records already hold, this never fails for a conflict.

- The user already registered (a retried confirmation, or a client that called ``POST /users`` first):
  nothing is written, and the records stay as they are.
- The handle the user asked for (``preferred_username``) is taken, or is not a valid handle: the
  default handle (``services.default_handle``) is used instead; the user sees it on their profile.
- The verified address is already claimed by another account (another issuer's user verified it
  first): the customer keeps it unverified, as ``POST /users`` does for a token without a verified
  address (it claims nothing, so it cannot take the address from its owner).
"""

from collections.abc import Mapping
from enum import StrEnum
from typing import Final

from pydantic import TypeAdapter, ValidationError

from shopfeed.accounts.schemas import MAX_NAME_LENGTH
from shopfeed.accounts.services import Users, default_handle, register_user
from shopfeed.feed.models import Handle
from shopfeed.platform.errors import AlreadyExists, EmailInUse
from shopfeed.platform.identity import Caller

CONFIRM_SIGN_UP: Final = "PostConfirmation_ConfirmSignUp"
_HANDLE: Final = TypeAdapter(Handle)


class SignUpOutcome(StrEnum):
    REGISTERED = "registered"
    ALREADY_REGISTERED = "already registered"


def register_signed_up_user(users: Users, attributes: Mapping[str, str]) -> SignUpOutcome:
    """Register the user whose confirmed Cognito attributes are ``attributes`` (``sub``, ``email``,
    ``email_verified``, and ``name`` / ``given_name`` / ``family_name`` / ``preferred_username`` when
    the pool holds them). Idempotent, and never refused for a conflict (see the module's docstring)."""
    user_id = attributes["sub"]
    email = attributes["email"]
    verified = attributes.get("email_verified", "false").lower() == "true"
    handle = _asked_handle(attributes) or default_handle(user_id)
    name = _name(attributes)
    # At most three tries: as asked, then without each conflicting claim (handle, address) in turn.
    while True:
        caller = Caller(user_id, frozenset(), email if verified else None)
        try:
            register_user(users, caller, email, name, handle)
        except AlreadyExists as exists:
            if exists.kind == "user":
                return SignUpOutcome.ALREADY_REGISTERED
            if handle == default_handle(user_id):
                raise  # the default handle is the user's own: taken only by a user of the same id
            handle = default_handle(user_id)
        except EmailInUse:
            verified = False
        else:
            return SignUpOutcome.REGISTERED


def _asked_handle(attributes: Mapping[str, str]) -> str | None:
    try:
        return _HANDLE.validate_python(attributes["preferred_username"])
    except (KeyError, ValidationError):
        return None


def _name(attributes: Mapping[str, str]) -> str:
    """The ``name`` attribute, else the given and family names, else the address's local part: the
    pool requires none of them, and a customer needs a name (the user can change it)."""
    given = " ".join(attributes[part].strip() for part in ("given_name", "family_name") if part in attributes)
    for candidate in (attributes.get("name", ""), given, attributes["email"].partition("@")[0]):
        # One line, as POST /users takes it: runs of white space (a newline too) become one space.
        if words := candidate.split():
            return " ".join(words)[:MAX_NAME_LENGTH]
    return default_handle(attributes["sub"])
