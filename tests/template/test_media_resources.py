"""The media bucket and the feed API's rights on it, as template.yaml declares them."""

from typing import Any

from local import cfn
from shopfeed.feed.media import KEPT_PREFIX, UPLOADS_PREFIX
from shopfeed.feed.settings import MediaSettings

TEMPLATE = cfn.load()
RESOURCES = TEMPLATE["Resources"]


def props(name: str) -> dict[str, Any]:
    return dict(RESOURCES[name]["Properties"])


def test_the_media_bucket_outlives_the_stack_is_encrypted_private_and_owned_by_the_stack() -> None:
    bucket = props("MediaBucket")
    assert (RESOURCES["MediaBucket"]["DeletionPolicy"], RESOURCES["MediaBucket"]["UpdateReplacePolicy"]) == (
        "Retain",
        "Retain",
    )
    (rule,) = bucket["BucketEncryption"]["ServerSideEncryptionConfiguration"]
    assert rule["ServerSideEncryptionByDefault"]["SSEAlgorithm"] in ("AES256", "aws:kms")
    assert bucket["PublicAccessBlockConfiguration"] == {
        "BlockPublicAcls": True,
        "BlockPublicPolicy": True,
        "IgnorePublicAcls": True,
        "RestrictPublicBuckets": True,
    }
    assert bucket["OwnershipControls"] == {"Rules": [{"ObjectOwnership": "BucketOwnerEnforced"}]}


def test_orphaned_uploads_expire_and_kept_media_do_not() -> None:
    (rule,) = props("MediaBucket")["LifecycleConfiguration"]["Rules"]
    assert (rule["Status"], rule["Prefix"], rule["ExpirationInDays"]) == ("Enabled", UPLOADS_PREFIX, 1)
    assert rule["AbortIncompleteMultipartUpload"]["DaysAfterInitiation"] == 1
    assert not KEPT_PREFIX.startswith(rule["Prefix"])


def test_the_media_bucket_refuses_every_request_without_tls() -> None:
    policy = props("MediaBucketPolicy")
    assert policy["Bucket"] == {"Ref": "MediaBucket"}
    (statement,) = policy["PolicyDocument"]["Statement"]
    assert (statement["Effect"], statement["Principal"], statement["Action"]) == ("Deny", "*", "s3:*")
    assert statement["Resource"] == [{"Fn::GetAtt": ["MediaBucket", "Arn"]}, {"Fn::Sub": "${MediaBucket.Arn}/*"}]
    assert statement["Condition"] == {"Bool": {"aws:SecureTransport": "false"}}


def test_the_feed_api_reads_and_writes_the_two_prefixes_only_and_deletes_nothing() -> None:
    function = props("FeedApiFunction")
    s3 = [
        statement
        for statement in function["Policies"][0]["Statement"]
        if any(str(action).startswith("s3:") for action in statement["Action"])
    ]
    assert s3 == [
        {
            "Effect": "Allow",
            "Action": ["s3:PutObject", "s3:GetObject"],
            "Resource": [
                {"Fn::Sub": "${MediaBucket.Arn}/" + UPLOADS_PREFIX + "*"},
                {"Fn::Sub": "${MediaBucket.Arn}/" + KEPT_PREFIX + "*"},
            ],
        }
    ]
    variables = function["Environment"]["Variables"]
    assert variables["MEDIA_BUCKET_NAME"] == {"Ref": "MediaBucket"}
    assert set(MediaSettings.model_fields) == {"media_bucket_name"}


def test_only_the_feed_api_is_given_the_media_bucket() -> None:
    given = [
        name
        for name, resource in RESOURCES.items()
        if resource["Type"] == "AWS::Serverless::Function"
        and "MEDIA_BUCKET_NAME" in resource["Properties"].get("Environment", {}).get("Variables", {})
    ]
    assert given == ["FeedApiFunction"]
