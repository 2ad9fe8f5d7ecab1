from typing import Annotated

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.depends import Depends

from shopfeed.feed import bootstrap
from shopfeed.feed.media import services
from shopfeed.feed.media.storage import MediaStorage
from shopfeed.feed.models import Post
from shopfeed.feed.schemas import CreateUpload, PostView, UploadView
from shopfeed.platform.http import CurrentCaller, json_response
from shopfeed.platform.observability import logger, metrics
from shopfeed.platform.problems import problem_responses

router = Router()
Media = Annotated[MediaStorage, Depends(bootstrap.media_storage)]


@router.post(
    "/media",
    summary="A presigned S3 upload for one file (image/jpeg, png, webp or video/mp4, up to 10 MiB); "
    "name its media_id in a post",
    responses=problem_responses(),
    tags=["posts"],
)
def request_upload(body: CreateUpload, caller: CurrentCaller, media: Media) -> Response[UploadView]:
    # No Idempotency-Key: nothing is stored; a retry gets a new form and the unused one expires.
    upload = services.request_upload(media, caller.user_id, body.content_type)
    logger.info("upload form given", media_id=upload.media_id, content_type=upload.content_type)
    metrics.add_metric(name="MediaUploadRequested", unit="Count", value=1)
    return json_response(UploadView.of(upload))


def post_view(post: Post) -> PostView:
    """A post as the API shows it, with download links of its media (the bucket is asked for nothing
    and its client is not built for a post without media)."""
    if not post.media_ref:
        return PostView.of(post)
    return PostView.of(post, services.links(bootstrap.media_storage(), post.author_id, post.media_ref))
