"""A function that answers at once, for measuring the local stack's own cost per request (bench/local_http.py).

Loaded by a local worker as the template's functions are; its answer is the size of a product's.
"""

import json
from typing import Any

_BODY = json.dumps({"product_id": "P-LOAD-HTTP", "name": "n" * 40, "price": 1999, "description": "d" * 160})


def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    return {"statusCode": 200, "headers": {"Content-Type": "application/json"}, "body": _BODY}
