"""Orders: placing, reading, listing and cancelling them (use cases, repository). Customer profiles
share the orders store and port for now (see ``services``)."""
