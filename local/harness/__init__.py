"""The functions run in this process, for the tests and the benchmarks: an API client over a handler
(``client``, payload-2.0 events in ``apigw``), the template's tables (``tables``), queues and streams
delivered to their workers with the local stack's pollers (``queues``, ``fanout``, ``feed_stream``),
concurrent requests each in a container of its own (``race``), request bodies and seeding through the
APIs (``factories``, ``feed_factories``, ``feed_seed``) and domain objects valid by default
(``builders``, ``feed_builders``).

Nothing here imports the tests: they import it.
"""
