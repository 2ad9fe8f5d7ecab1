"""shopfeed: DynamoDB e-commerce and social-feed access patterns on AWS Lambda."""
