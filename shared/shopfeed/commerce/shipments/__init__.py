"""Shipments of an order: use cases and their repository (a shipment moves its order's status)."""
