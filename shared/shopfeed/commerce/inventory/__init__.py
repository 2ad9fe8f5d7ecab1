"""Inventory: daily stock-level snapshots of the catalog (the job, its repository, the read)."""
