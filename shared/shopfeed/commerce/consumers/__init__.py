"""The commerce consumers' handlers, one module per function, named after it (``commerce_stream``,
``payment_worker``, ``stock_rebalancer``): each binds the ports ``commerce.bootstrap`` builds to the
domain's handlers, and a function loads its own module and no other's (tests/unit/test_import_graph.py).
"""
