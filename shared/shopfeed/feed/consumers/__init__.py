"""The feed consumers' handlers, one module per function, named after it (``feed_stream``: one handler
per effect of a FeedTable write; ``fanout_worker``: the fanout queue's messages). Ports come from
``feed.bootstrap``, built once per container; a function loads its own module and no other's
(tests/unit/test_import_graph.py).
"""
