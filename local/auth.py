"""The local identity provider and the HTTP API's JWT authorizer.

Tokens are RS256 JWTs signed by a key generated once into the state directory (``.local-stack/``)
and reused, so tokens stay valid across restarts. The issuer is the stack's own URL; it serves the
OpenID discovery document and JWKS there, like any issuer an HTTP API can be pointed at. The
authorizer checks what API Gateway's JWT authorizer checks (signature by a key of the issuer, kid,
RSA algorithm, issuer, ``aud`` or else ``client_id``, exp/nbf, route scopes) and answers as it does:
401 ``{"message":"Unauthorized"}`` with a ``www-authenticate`` header saying why.
"""

import base64
import hashlib
import json
import os
import time
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

AUDIENCE = "shopfeed-local"
KEY_FILE = "jwt-signing-key.pem"
TOKEN_LIFETIME_S = 12 * 3600
# HTTP API JWT authorizers accept RSA signatures only.
ALGORITHMS = ("RS256", "RS384", "RS512")


def issuer_for(port: int) -> str:
    """The local issuer of the stack listening on ``port`` (the sample events use port 3000)."""
    return f"http://127.0.0.1:{port}/__local/issuer"


class SigningKey:
    """The local identity provider's RSA key: mints tokens and publishes the JWKS that verifies them."""

    def __init__(self, private_key: rsa.RSAPrivateKey) -> None:
        self._private = private_key
        numbers = private_key.public_key().public_numbers()
        self.jwk = {"kty": "RSA", "use": "sig", "alg": "RS256", "n": _b64_int(numbers.n), "e": _b64_int(numbers.e)}
        # RFC 7638 thumbprint: a kid that changes only when the key does.
        canonical = json.dumps({k: self.jwk[k] for k in ("e", "kty", "n")}, separators=(",", ":"))
        self.kid = base64.urlsafe_b64encode(hashlib.sha256(canonical.encode()).digest()).rstrip(b"=").decode()
        self.jwk["kid"] = self.kid

    @classmethod
    def load_or_create(cls, state_dir: Path) -> "SigningKey":
        """The key in ``state_dir``, generated on first use (readable by the owner only)."""
        path = state_dir / KEY_FILE
        if not path.exists():
            cls._create(path)
        key = serialization.load_pem_private_key(path.read_bytes(), password=None)
        if not isinstance(key, rsa.RSAPrivateKey):
            raise ValueError(f"{path} is not an RSA private key")
        return cls(key)

    @staticmethod
    def _create(path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        pem = key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
        # Written aside, then linked into place: a stack and `make token` starting together must
        # end up with one key, never a half-written file.
        draft = path.with_name(f".{path.name}.{os.getpid()}")
        descriptor = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(pem)
        try:
            os.link(draft, path)
        except FileExistsError:
            pass  # the other one won; use its key
        finally:
            draft.unlink()

    @property
    def public_key(self) -> rsa.RSAPublicKey:
        return self._private.public_key()

    def jwks(self) -> dict[str, Any]:
        return {"keys": [self.jwk]}

    def mint(
        self,
        issuer: str,
        sub: str,
        groups: Iterable[str] = (),
        *,
        audience: str = AUDIENCE,
        lifetime_s: int = TOKEN_LIFETIME_S,
        now: float | None = None,
        **claims: Any,
    ) -> str:
        """An ID-token-like JWT for ``sub``; groups go in ``cognito:groups``, as Cognito puts them."""
        issued = int(time.time() if now is None else now)
        payload: dict[str, Any] = {
            "iss": issuer,
            "sub": sub,
            "aud": audience,
            "iat": issued,
            "exp": issued + lifetime_s,
            "jti": str(uuid.uuid4()),
            "token_use": "id",
        }
        if groups := [g for g in groups if g]:
            payload["cognito:groups"] = groups
        return self.sign(payload | claims)

    def sign(self, claims: Mapping[str, Any]) -> str:
        """Any claims, signed RS256 with this key and its kid."""
        return jwt.encode(dict(claims), self._private, algorithm="RS256", headers={"kid": self.kid})


def discovery_document(issuer: str) -> dict[str, Any]:
    """The OpenID discovery document of the local issuer (enough for JWT verifiers to find the JWKS)."""
    return {
        "issuer": issuer,
        "jwks_uri": f"{issuer}/.well-known/jwks.json",
        "id_token_signing_alg_values_supported": ["RS256"],
        "subject_types_supported": ["public"],
        "response_types_supported": ["id_token"],
    }


class Unauthorized(Exception):
    """The authorizer refused the request; ``description`` goes in ``www-authenticate`` (None: no token)."""

    def __init__(self, description: str | None) -> None:
        super().__init__(description or "no token")
        self.description = description


class MissingScope(Exception):
    """The token is valid but lacks every scope the route requires (API Gateway answers 403)."""


@dataclass(frozen=True)
class Authorization:
    """What the authorizer hands the integration: claims as API Gateway stringifies them, and scopes."""

    claims: dict[str, str]
    scopes: list[str] | None


class JwtAuthorizer:
    """An HTTP API JWT authorizer: identity source, issuer, audiences and the issuer's keys."""

    def __init__(
        self,
        issuer: str,
        audiences: Sequence[str],
        keys: Mapping[str, Any],
        identity_source: str = "$request.header.Authorization",
    ) -> None:
        self.issuer = issuer
        self.audiences = list(audiences)
        self.keys = dict(keys)  # kid -> public key
        prefix = "$request.header."
        if not identity_source.startswith(prefix):
            raise ValueError(f"unsupported identity source {identity_source!r} (only request headers)")
        self.header = identity_source[len(prefix) :].lower()
        # Tokens whose signature, issuer and audience passed, with their claims and what the integration
        # gets of them: PyJWT spends ~0.8 ms checking a token's base64 alphabet character by character,
        # and stringifying the claims again was a twentieth of the stack's CPU per request. A cached
        # token is only checked again for what changes with time (exp, nbf) and the route's scopes.
        self._verified: dict[str, tuple[dict[str, Any], Authorization]] = {}

    def authorize(self, headers: Mapping[str, str], required_scopes: Sequence[str] = ()) -> Authorization:
        """The verified identity of a request with lower-cased ``headers``; raises Unauthorized or MissingScope."""
        raw = (headers.get(self.header) or "").strip()
        if not raw:
            raise Unauthorized(None)
        token = raw[7:].strip() if raw[:7].lower() == "bearer " else raw  # the prefix is optional
        cached = self._verified.get(token)
        if cached is None:
            claims = self._verify(token)
            scopes = str(claims["scope"]).split() if claims.get("scope") else None
            cached = claims, Authorization({name: _claim_text(value) for name, value in claims.items()}, scopes)
            if len(self._verified) >= _VERIFIED_TOKENS:
                self._verified.clear()
            self._verified[token] = cached
        else:
            _check_times(cached[0])
        authorization = cached[1]
        if required_scopes and not set(required_scopes) & set(authorization.scopes or ()):
            raise MissingScope()
        return authorization

    def _verify(self, token: str) -> dict[str, Any]:
        try:
            header = jwt.get_unverified_header(token)
        except jwt.InvalidTokenError:
            raise Unauthorized("the token is malformed") from None
        if header.get("alg") not in ALGORITHMS:
            raise Unauthorized("the token's signing algorithm is not supported")
        key = self.keys.get(header.get("kid", ""))
        if key is None:
            raise Unauthorized("the token's kid is not among the issuer's keys")
        try:
            claims: dict[str, Any] = jwt.decode(
                token,
                key,
                algorithms=list(ALGORITHMS),
                issuer=self.issuer,
                options={"require": ["exp", "iss"], "verify_aud": False},
            )
        except jwt.ExpiredSignatureError:
            raise Unauthorized(_EXPIRED) from None
        except jwt.ImmatureSignatureError:
            raise Unauthorized(_NOT_YET_VALID) from None
        except jwt.InvalidIssuerError:
            raise Unauthorized("the token does not have a valid issuer") from None
        except jwt.InvalidSignatureError:
            raise Unauthorized("the token signature is invalid") from None
        except jwt.InvalidTokenError as error:
            raise Unauthorized(f"the token is invalid: {error}") from None
        if not self._audience_matches(claims):
            raise Unauthorized("the token does not have a valid audience")
        return claims

    def _audience_matches(self, claims: Mapping[str, Any]) -> bool:
        # API Gateway checks aud when present, and client_id only when aud is absent.
        if "aud" in claims:
            audiences = claims["aud"] if isinstance(claims["aud"], list) else [claims["aud"]]
            return any(a in self.audiences for a in audiences)
        return claims.get("client_id") in self.audiences


_VERIFIED_TOKENS = 4096  # the cache starts over beyond this many tokens
_EXPIRED = "the token has expired"
_NOT_YET_VALID = "the token is not valid yet"


def _check_times(claims: Mapping[str, Any]) -> None:
    # The same comparisons as PyJWT's, without leeway.
    now = time.time()
    if float(claims["exp"]) <= now:
        raise Unauthorized(_EXPIRED)
    if "nbf" in claims and float(claims["nbf"]) > now:
        raise Unauthorized(_NOT_YET_VALID)


def _claim_text(value: Any) -> str:
    # HTTP API hands claims to Lambda as strings; arrays become "[a b]" (identity.py reads groups from the
    # token itself, where that form is ambiguous).
    if isinstance(value, list):
        return "[" + " ".join(str(v) for v in value) + "]"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return json.dumps(value, separators=(",", ":"))
    return str(value)


def _b64_int(number: int) -> str:
    raw = number.to_bytes((number.bit_length() + 7) // 8, "big")
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()
