"""A moto server in a thread: AWS over real HTTP, for what moto's in-process mock cannot show (botocore
event handlers that answer a request instead of sending it: the mock answers first)."""

from collections.abc import Iterator
from contextlib import contextmanager

from moto.server import ThreadedMotoServer

from local.dynamodb_local import free_port


@contextmanager
def moto_server() -> Iterator[str]:
    """The server's endpoint, for the block."""
    port = free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port)
    server.start()
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.stop()
