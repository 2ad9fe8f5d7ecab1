"""A test's HTTP server, served from a thread of the test's process."""

import threading
from socketserver import BaseServer

# shutdown() returns once serve_forever next looks at its flag: every 0.5 s by default, which was half
# a second of the teardown of every test that stops a server (tests/local/test_server.py: 18 s of 29
# tests, 4 s now).
POLL_INTERVAL_S = 0.02


def serve_in_thread(server: BaseServer) -> threading.Thread:
    """``server`` serving from a daemon thread (started); stop it with ``server.shutdown()``."""
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": POLL_INTERVAL_S}, daemon=True)
    thread.start()
    return thread
