"""`sam local invoke` / `start-api` against local DynamoDB (docs/sam-local.md)."""
