"""The catalog: products, their prices and stock (use cases, repository), and product search (the
projection the stream keeps in step, the query, the reindex tool)."""
