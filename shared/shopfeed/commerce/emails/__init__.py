"""Customer emails: the order events a customer hears about, one email per event id (see ``worker``)."""
