"""What every container would otherwise load for itself, loaded once in the fork server they start
from (race.py): the function's modules and the SDK's DynamoDB model. The client is a throwaway with
dummy credentials, so no container inherits credentials, a region or an endpoint from here."""

import boto3

# Imported for their side effect: the modules load.
import functions.commerce_api.app
import functions.feed_api.app  # noqa: F401

boto3.client("dynamodb", region_name="us-east-1", aws_access_key_id="init", aws_secret_access_key="init")
