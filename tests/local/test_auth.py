"""The local JWT authorizer: it refuses what API Gateway's JWT authorizer refuses, for the same reasons."""

import time
from pathlib import Path

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa

from local.auth import AUDIENCE, JwtAuthorizer, MissingScope, SigningKey, Unauthorized, issuer_for

ISSUER = issuer_for(3000)


@pytest.fixture(scope="module")
def key(tmp_path_factory: pytest.TempPathFactory) -> SigningKey:
    return SigningKey.load_or_create(tmp_path_factory.mktemp("state"))


@pytest.fixture
def authorizer(key: SigningKey) -> JwtAuthorizer:
    return JwtAuthorizer(ISSUER, [AUDIENCE], {key.kid: key.public_key})


def bearer(token: str) -> dict[str, str]:
    return {"authorization": f"Bearer {token}"}


def refusal(authorizer: JwtAuthorizer, headers: dict[str, str]) -> str | None:
    with pytest.raises(Unauthorized) as refused:
        authorizer.authorize(headers)
    return refused.value.description


def test_a_valid_token_yields_its_claims_as_api_gateway_passes_them(authorizer: JwtAuthorizer, key: SigningKey) -> None:
    # given a token for U100 in two groups
    token = key.mint(ISSUER, "U100", ["admin", "ops"])

    # when it is checked
    authorization = authorizer.authorize(bearer(token))

    # then the claims are strings, the array claim in API Gateway's "[a b]" form
    assert authorization.claims["sub"] == "U100"
    assert authorization.claims["cognito:groups"] == "[admin ops]"
    assert authorization.claims["exp"].isdigit()
    assert authorization.scopes is None


def test_the_bearer_prefix_is_optional(authorizer: JwtAuthorizer, key: SigningKey) -> None:
    assert authorizer.authorize({"authorization": key.mint(ISSUER, "U100")}).claims["sub"] == "U100"


def test_a_missing_token_is_refused_without_a_reason(authorizer: JwtAuthorizer) -> None:
    assert refusal(authorizer, {}) is None


def test_an_expired_token_is_refused(authorizer: JwtAuthorizer, key: SigningKey) -> None:
    token = key.mint(ISSUER, "U100", lifetime_s=60, now=time.time() - 3600)
    assert refusal(authorizer, bearer(token)) == "the token has expired"


def test_a_token_for_another_audience_is_refused(authorizer: JwtAuthorizer, key: SigningKey) -> None:
    token = key.mint(ISSUER, "U100", audience="another-app")
    assert refusal(authorizer, bearer(token)) == "the token does not have a valid audience"


def test_client_id_counts_only_when_there_is_no_audience(authorizer: JwtAuthorizer, key: SigningKey) -> None:
    # given an access-token-like JWT: client_id, no aud
    payload = {"iss": ISSUER, "sub": "U100", "client_id": AUDIENCE, "exp": int(time.time()) + 60}
    token = key.sign(payload)

    # then its client_id stands for the audience
    assert authorizer.authorize(bearer(token)).claims["client_id"] == AUDIENCE


def test_a_token_from_another_issuer_is_refused(authorizer: JwtAuthorizer, key: SigningKey) -> None:
    token = key.mint(issuer_for(4000), "U100")
    assert refusal(authorizer, bearer(token)) == "the token does not have a valid issuer"


def test_a_token_signed_by_another_key_is_refused(authorizer: JwtAuthorizer, key: SigningKey) -> None:
    # given a token with our kid, signed by a stranger's key
    stranger = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    payload = {"iss": ISSUER, "sub": "U100", "aud": AUDIENCE, "exp": int(time.time()) + 60}
    forged = jwt.encode(payload, stranger, algorithm="RS256", headers={"kid": key.kid})

    # then its signature does not verify
    assert refusal(authorizer, bearer(forged)) == "the token signature is invalid"


def test_a_tampered_token_is_refused(authorizer: JwtAuthorizer, key: SigningKey) -> None:
    # given a valid token whose claims were edited (sub U100 -> U200 keeps the base64 length)
    header, claims, signature = key.mint(ISSUER, "U100").split(".")
    edited = jwt.utils.base64url_encode(jwt.utils.base64url_decode(claims).replace(b"U100", b"U200")).decode()

    # then it is refused
    assert refusal(authorizer, bearer(f"{header}.{edited}.{signature}")) == "the token signature is invalid"


def test_an_unsigned_token_is_refused(authorizer: JwtAuthorizer, key: SigningKey) -> None:
    token = jwt.encode(
        {"iss": ISSUER, "sub": "U100", "aud": AUDIENCE}, None, algorithm="none", headers={"kid": key.kid}
    )
    assert refusal(authorizer, bearer(token)) == "the token's signing algorithm is not supported"


def test_garbage_is_refused(authorizer: JwtAuthorizer) -> None:
    assert refusal(authorizer, bearer("not-a-jwt")) == "the token is malformed"


def test_a_route_requiring_scopes_refuses_a_token_without_them(authorizer: JwtAuthorizer, key: SigningKey) -> None:
    # given tokens with and without the route's scope
    with_scope = key.mint(ISSUER, "U100", scope="orders/read profile")
    without = key.mint(ISSUER, "U100")

    # then only the first passes
    assert authorizer.authorize(bearer(with_scope), ["orders/read"]).scopes == ["orders/read", "profile"]
    with pytest.raises(MissingScope):
        authorizer.authorize(bearer(without), ["orders/read"])


def test_the_signing_key_is_made_once_and_reused(tmp_path: Path) -> None:
    # given a key created in a state directory
    first = SigningKey.load_or_create(tmp_path)

    # when it is loaded again
    second = SigningKey.load_or_create(tmp_path)

    # then it is the same key, readable by its owner only
    assert second.kid == first.kid
    assert (tmp_path / "jwt-signing-key.pem").stat().st_mode & 0o777 == 0o600


def test_a_token_accepted_before_is_refused_once_it_expires(
    authorizer: JwtAuthorizer, key: SigningKey, monkeypatch: pytest.MonkeyPatch
) -> None:
    # given a token the authorizer accepted (and remembers as verified)
    token = key.mint(ISSUER, "U100", lifetime_s=60)
    assert authorizer.authorize(bearer(token)).claims["sub"] == "U100"

    # when it is presented again after its expiry
    later = time.time() + 61
    monkeypatch.setattr(time, "time", lambda: later)

    # then it is refused, as the first check would have
    assert refusal(authorizer, bearer(token)) == "the token has expired"


def test_a_token_not_yet_valid_when_first_seen_is_refused(authorizer: JwtAuthorizer, key: SigningKey) -> None:
    token = key.mint(ISSUER, "U100", nbf=int(time.time()) + 600)
    assert refusal(authorizer, bearer(token)) == "the token is not valid yet"
    assert refusal(authorizer, bearer(token)) == "the token is not valid yet"


def test_a_token_remembered_from_a_route_without_scopes_is_still_refused_by_one_requiring_them(
    authorizer: JwtAuthorizer, key: SigningKey
) -> None:
    # given a token without scopes, accepted (and remembered) on a route that requires none
    token = key.mint(ISSUER, "U100", groups=["admin"])
    first = authorizer.authorize(bearer(token))

    # when it is presented again, on a route that requires none and on one that requires a scope
    again = authorizer.authorize(bearer(token))

    # then the remembered answer is the first one, and the scope check still runs on every request
    assert again == first
    assert again.claims["cognito:groups"] == "[admin]"
    with pytest.raises(MissingScope):
        authorizer.authorize(bearer(token), ["orders/read"])
