"""What every container would otherwise load for itself, loaded once in the fork server they start
from (race.py): the functions' modules (as template.yaml lists them, with the APIs' route groups)
and the SDK's DynamoDB model.
The client is a throwaway with dummy credentials, so no container inherits credentials, a region or
an endpoint from here."""

import importlib

import boto3

from local import cfn

for function in cfn.resources("AWS::Serverless::Function"):
    importlib.import_module(cfn.handler_module(function))
# An API's import leaves its route groups to their first requests (decision 233): every container
# would import its own.
for function in cfn.api_functions():
    importlib.import_module(cfn.handler_module(function)).app.load_all()

boto3.client("dynamodb", region_name="us-east-1", aws_access_key_id="init", aws_secret_access_key="init")
