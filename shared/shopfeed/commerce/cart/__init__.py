"""The user's shopping cart (seed 001, AP 8): lines in the user's partition, checked out as an order."""
