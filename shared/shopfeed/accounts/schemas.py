"""HTTP request and response models of the user routes (both halves of a user)."""

from typing import Annotated, Final

from pydantic import Field, StringConstraints

from shopfeed.commerce.models import Customer
from shopfeed.feed.models import Bio, DisplayName, Handle, Profile
from shopfeed.platform.models import Request, View
from shopfeed.platform.types import MULTI_LINE, SINGLE_LINE, Email

MAX_NAME_LENGTH: Final = 120
Name = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=MAX_NAME_LENGTH), SINGLE_LINE]


class RegisterUser(Request):
    email: Annotated[
        Email | None,
        Field(description="Needed only when the token has no verified email claim; otherwise it must equal it."),
    ] = None
    name: Name
    handle: Annotated[
        Handle | None, Field(description="Unique, 3-30 of a-z 0-9 _ (case-insensitive); default: one made for you")
    ] = None
    display_name: Annotated[Annotated[DisplayName, SINGLE_LINE] | None, Field(description="Default: the name")] = None
    bio: Annotated[Bio, MULTI_LINE] = ""


class UpdateProfile(Request):
    name: Name | None = None
    display_name: Annotated[DisplayName, SINGLE_LINE] | None = None
    bio: Annotated[Bio, MULTI_LINE] | None = None

    def customer_changes(self) -> dict[str, object]:
        return self.model_dump(include={"name"}, exclude_none=True)

    def profile_changes(self) -> dict[str, object]:
        return self.model_dump(include={"display_name", "bio"}, exclude_none=True)


class UserView(View):
    """ECOM-001 and FEED-001: the customer and the public social profile."""

    user_id: str
    created_at: str
    # The legal name and the address are private: another user sees the social profile (display name).
    name: Annotated[str | None, Field(description="Only for the user themself and admins.")] = None
    email: Annotated[str | None, Field(description="Only for the user themself and admins.")] = None
    handle: str | None = None
    display_name: str | None = None
    bio: str | None = None
    followers_count: int | None = None
    following_count: int | None = None
    posts_count: int | None = None

    @classmethod
    def of(cls, customer: Customer, profile: Profile | None, private: bool) -> "UserView":
        social = (
            profile.model_dump(
                include={"handle", "display_name", "bio", "followers_count", "following_count", "posts_count"}
            )
            if profile
            else {}
        )
        return cls(
            user_id=customer.user_id,
            created_at=customer.created_at,
            name=customer.name if private else None,
            email=customer.email if private else None,
            **social,
        )
