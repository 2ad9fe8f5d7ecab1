"""The payment provider port, and the sandbox provider that ships.

The payment worker calls ``authorize`` once per attempt with the attempt id as the provider's
idempotency key, and ``refund`` once per refund with the refund id as its key: a provider answers a
repeated key with its first result and never charges (or refunds) twice (card processors' APIs work
this way). A real provider is another class with the same method: its
HTTP client with a timeout well below the worker's, its credentials read once per container, its
answers mapped onto ``Approved`` / ``Declined`` / ``ProviderUnavailable``. ``bootstrap`` picks the class
named by the ``PAYMENT_PROVIDER`` setting.

The sandbox decides by amount, as card networks' test values do (minor units of a two-decimal
currency):

    200000 - 299999   declined, code = amount // 100 (2000 - 2999, processor response codes)
    300000 - 300099   provider unavailable (every call: the attempt ends in the dead-letter queue)
    anything else     approved

and refunds by the amount refunded (which a charge of the same amount approves):

    400000 - 499999   refund declined, code = amount // 100 (4000 - 4999)
    500000 - 500099   provider unavailable for the refund (every call)
    anything else     refunded

The sandbox provider itself (``payments.sandbox``) keeps a ledger in CommerceTable (``SANDBOX#<key>``,
CHARGE or REFUND): one item per idempotency key holding the first answer, which it gives again for the
same key, and how many calls the key got (tests count them). A provider's dashboard is what that ledger
stands for; no card data is ever stored.
"""

import hashlib
from dataclasses import dataclass
from typing import Final, Protocol

from shopfeed.platform.types import Money

SANDBOX: Final = "sandbox"
DECLINED_AMOUNTS: Final = range(200_000, 300_000)
UNAVAILABLE_AMOUNTS: Final = range(300_000, 300_100)
REFUND_DECLINED_AMOUNTS: Final = range(400_000, 500_000)
REFUND_UNAVAILABLE_AMOUNTS: Final = range(500_000, 500_100)


@dataclass(frozen=True)
class Approved:
    """The provider authorized the amount; ``reference`` is its id for the authorization."""

    reference: str


@dataclass(frozen=True)
class Declined:
    """The provider refused; ``code`` says why in the provider's terms."""

    reference: str
    code: str


Outcome = Approved | Declined


class ProviderUnavailable(Exception):
    """No answer came back (timeout, 5xx, throttling): nothing is known to be charged (or refunded),
    and the same attempt (or refund) is tried again later under the same idempotency key."""

    def __init__(self, attempt_id: str) -> None:
        super().__init__(f"the payment provider did not answer for {attempt_id}")
        self.attempt_id = attempt_id


class PaymentProvider(Protocol):
    """Authorizes payments and refunds them. Implementations are idempotent by ``attempt_id`` and
    ``refund_id``."""

    def authorize(self, attempt_id: str, amount: Money, payment_method: str) -> Outcome:
        """Authorize ``amount`` on the provider's ``payment_method`` token. A repeated ``attempt_id``
        answers the first outcome and charges nothing more. Raises ProviderUnavailable."""
        ...

    def refund(self, refund_id: str, amount: Money, charge_reference: str) -> Outcome:
        """Give ``amount`` of the charge ``charge_reference`` back. A repeated ``refund_id`` answers
        the first outcome and refunds nothing more. Raises ProviderUnavailable."""
        ...


def sandbox_outcome(attempt_id: str, amount: Money) -> Outcome | None:
    """What the sandbox answers for ``amount`` (None: it is unavailable). Deterministic: the same
    attempt always gets the same outcome and reference."""
    reference = "sbx_" + hashlib.sha256(attempt_id.encode()).hexdigest()[:24]
    if amount.amount in UNAVAILABLE_AMOUNTS:
        return None
    if amount.amount in DECLINED_AMOUNTS:
        return Declined(reference=reference, code=str(amount.amount // 100))
    return Approved(reference=reference)


def sandbox_refund_outcome(refund_id: str, amount: Money) -> Outcome | None:
    """What the sandbox answers for refunding ``amount`` (None: it is unavailable)."""
    reference = "sbr_" + hashlib.sha256(refund_id.encode()).hexdigest()[:24]
    if amount.amount in REFUND_UNAVAILABLE_AMOUNTS:
        return None
    if amount.amount in REFUND_DECLINED_AMOUNTS:
        return Declined(reference=reference, code=str(amount.amount // 100))
    return Approved(reference=reference)
