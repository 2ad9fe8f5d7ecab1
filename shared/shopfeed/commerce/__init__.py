"""The commerce bounded context: customers, catalog, stock, orders, and their outbox events."""
