"""A function whose import fails, as a handler with a missing dependency does in Lambda."""

import a_module_that_does_not_exist  # noqa: F401


def handler(event: object, context: object) -> None:
    return None
