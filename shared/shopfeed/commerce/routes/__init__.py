"""HTTP routes of the commerce API, one Router per resource; functions/commerce_api wires them."""
