"""``make load``: Locust drives the walkthrough's traffic mix against the local stack or a deployed one.

``mix`` says what is called and how answers are judged, ``locustfile`` holds the Locust users (run in
Locust's own tool environment), ``report`` reads Locust's CSV into a per-route report, and
``python -m bench.load`` (the driver) makes the identities, sets up a product and runs it all.
"""
