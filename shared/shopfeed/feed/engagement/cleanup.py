"""A deleted post's likes and comments are removed: unreachable from the API as soon as the post is
gone, they would otherwise stay in its partition for good."""

from collections.abc import Sequence

from shopfeed.feed import items, keys
from shopfeed.platform import batch_writes, dynamo, streams
from shopfeed.platform.dynamo import BASE_TABLE


def remove_engagement(table: dynamo.Table, changes: Sequence[streams.ItemChange]) -> int:
    """Delete the likes and comments of every deleted post (one Query per page of its partition, then
    BatchWriteItem deletes); how many items went. Deleting what is gone already is no error, so a
    redelivered REMOVE finds less and deletes that."""
    removed = 0
    for change in changes:
        if change.entity_type != items.POST or change.kind is not streams.ChangeKind.REMOVE:
            continue
        post_id = keys.parse_post_id(str((change.old_image or {})["PK"]))
        start = None
        while True:
            response = table.query(BASE_TABLE, keys.post_partition(post_id), start=start, consistent=True)
            deletes = [{"DeleteRequest": {"Key": {"PK": raw["PK"], "SK": raw["SK"]}}} for raw in response["Items"]]
            if deletes:
                batch_writes.write_all(table.client, table.name, deletes)  # type: ignore[arg-type]
                removed += len(deletes)
            start = response.get("LastEvaluatedKey")
            if not start:
                break
    return removed
