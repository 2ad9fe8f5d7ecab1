"""The sandbox payment provider (``payments.provider`` describes how it decides and what it keeps).

Its own module: the ledger it keeps needs commerce's items and keys, and the payment services, which
the API's routes import, need only the port and its outcomes (decision 214).
"""

from datetime import timedelta
from typing import Final

from shopfeed.commerce import items, keys
from shopfeed.commerce.payments.provider import (
    Approved,
    Declined,
    Outcome,
    ProviderUnavailable,
    sandbox_outcome,
    sandbox_refund_outcome,
)
from shopfeed.platform import dynamo
from shopfeed.platform.clock import epoch_seconds, iso, utc_now
from shopfeed.platform.types import Money

_LEDGER_RETENTION: Final = timedelta(days=30)


class SandboxProvider:
    """The sandbox (see the module docstring): one UpdateItem per call on its ledger."""

    def __init__(self, table: dynamo.Table) -> None:
        self._table = table

    def authorize(self, attempt_id: str, amount: Money, payment_method: str) -> Outcome:
        ledger = keys.sandbox_charge(attempt_id)
        return self._call(ledger, items.SANDBOX_CHARGE, attempt_id, amount, sandbox_outcome(attempt_id, amount))

    def refund(self, refund_id: str, amount: Money, charge_reference: str) -> Outcome:
        ledger = keys.sandbox_refund(refund_id)
        return self._call(ledger, items.SANDBOX_REFUND, refund_id, amount, sandbox_refund_outcome(refund_id, amount))

    def _call(
        self, key: keys.Key, entity_type: str, idempotency_key: str, amount: Money, outcome: Outcome | None
    ) -> Outcome:
        now = utc_now()
        first = {"entity_type": entity_type, "idempotency_key": idempotency_key, "amount": amount.model_dump()}
        if outcome is not None:
            first |= _stored(outcome)
        # One atomic write counts the call and keeps the first answer (if_not_exists): two calls at
        # once with one key still get one answer between them, as a provider's idempotency gives.
        ledger = self._table.update(
            key,
            dynamo.Update(
                set={"last_called_at": iso(now)},
                set_if_absent={
                    **first,
                    "first_called_at": iso(now),
                    "expires_at": epoch_seconds(now + _LEDGER_RETENTION),
                },
                add={"calls": 1},
            ),
        )
        if "outcome" not in ledger:
            raise ProviderUnavailable(idempotency_key)
        return _outcome_from(ledger)


def _stored(outcome: Outcome) -> dict[str, str]:
    if isinstance(outcome, Declined):
        return {"outcome": "declined", "reference": outcome.reference, "decline_code": outcome.code}
    return {"outcome": "approved", "reference": outcome.reference}


def _outcome_from(ledger: dynamo.Item) -> Outcome:
    if ledger["outcome"] == "declined":
        return Declined(reference=str(ledger["reference"]), code=str(ledger["decline_code"]))
    return Approved(reference=str(ledger["reference"]))
