"""Cognito post-confirmation trigger: a user who confirms their sign-up gets their customer and social
profile at once (shopfeed.accounts.signup), as ``POST /users`` would make them."""

from typing import Any

from aws_lambda_powertools.utilities.data_classes import event_source
from aws_lambda_powertools.utilities.data_classes.cognito_user_pool_event import PostConfirmationTriggerEvent
from aws_lambda_powertools.utilities.typing import LambdaContext

from shopfeed.accounts import bootstrap, signup
from shopfeed.platform import warmup
from shopfeed.platform.observability import logger, metrics

warmup.prime(bootstrap.accounts)


@logger.inject_lambda_context
@metrics.log_metrics
@event_source(data_class=PostConfirmationTriggerEvent)
def lambda_handler(event: PostConfirmationTriggerEvent, context: LambdaContext) -> dict[str, Any]:
    # The trigger also fires when a forgotten password is reset: that user registered long ago.
    if event.trigger_source == signup.CONFIRM_SIGN_UP:
        outcome = signup.register_signed_up_user(bootstrap.accounts(), event.request.user_attributes)
        logger.info("sign-up confirmed", outcome=outcome.value)
        if outcome is signup.SignUpOutcome.REGISTERED:
            metrics.add_metric(name="UserRegistered", unit="Count", value=1)
    # Cognito expects the event back.
    return event.raw_event
