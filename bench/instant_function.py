"""Functions that do no work, for measuring the local stack's own cost per request (bench/local_http.py).

Loaded by a local worker as the template's functions are; their answer is the size of a product's.
``handler`` answers at once; ``after_a_wait`` sleeps first, about as long as a product read takes
DynamoDB Local and the real handler at one client, so that the stack, the worker and the client wait
idle between requests as they do beside the real handler.
"""

import json
import time
from typing import Any

WAIT_S = 0.004
_BODY = json.dumps({"product_id": "P-LOAD-HTTP", "name": "n" * 40, "price": 1999, "description": "d" * 160})


def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    return {"statusCode": 200, "headers": {"Content-Type": "application/json"}, "body": _BODY}


def after_a_wait(event: dict[str, Any], context: Any) -> dict[str, Any]:
    time.sleep(WAIT_S)
    return handler(event, context)
