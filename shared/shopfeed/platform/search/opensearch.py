"""The search port on the official OpenSearch client: Amazon OpenSearch Service (or Serverless) in AWS,
signed with the function's own credentials (SigV4), and any OpenSearch-API engine over plain HTTP
locally and in tests.

opensearch-py is imported here only, and this module only where an engine is built (``engine``): no
function's import loads it; an API's priming does at init (decision 240).
"""

from collections.abc import Mapping, Sequence
from contextlib import suppress
from typing import Any

from opensearchpy import OpenSearch, Urllib3AWSV4SignerAuth, Urllib3HttpConnection
from opensearchpy.exceptions import ConnectionError as EngineConnectionError
from opensearchpy.exceptions import NotFoundError, RequestError, TransportError

from shopfeed.platform.search import (
    DELETED_FIELD,
    Outcome,
    Remove,
    SearchHit,
    SearchMapping,
    SearchPage,
    SearchQuery,
    SearchUnavailable,
    SearchWriteFailed,
    StoredDocument,
    Write,
    document,
    stored,
)

SIGNING_SERVICES = ("es", "aoss")  # a managed domain, a serverless collection
# Where the engine cannot page by search_after on a relevance sort, the adapter reads this many hits
# from the top and skips to the position itself (local engines only; see _pages_by_score).
_EMULATED_WINDOW = 1000
# The warm-up's search (decision 268): cheap for the engine, and allowed by the API roles' policy.
_MATCH_NOTHING = {"size": 0, "query": {"match_none": {}}, "track_total_hits": False}
# Per try (the API's budget allows one retry): an engine that hangs holds an init this long, twice.
WARM_UP_TIMEOUT = 0.25


def connect(
    endpoint: str, signing_service: str = "es", region: str | None = None, timeout: float = 5, retries: int = 2
) -> "OpenSearchIndex":
    """An adapter for ``endpoint``: ``https://host`` (or a bare host, as CloudFormation's DomainEndpoint
    gives it) is AWS, and requests carry SigV4 headers made from the function's role credentials,
    refreshed by botocore as they rotate; ``http://host:port`` is a local engine, unsigned."""
    url = endpoint if "://" in endpoint else f"https://{endpoint}"
    local = url.startswith("http://")  # AWS serves search over HTTPS only
    auth = None
    if not local:
        if signing_service not in SIGNING_SERVICES:
            raise ValueError(f"search signing service must be one of {SIGNING_SERVICES}, not {signing_service!r}")
        import boto3  # only signed adapters need credentials

        session = boto3.Session()
        auth = Urllib3AWSV4SignerAuth(session.get_credentials(), region or session.region_name, signing_service)
    client = OpenSearch(
        hosts=[url],
        http_auth=auth,
        connection_class=Urllib3HttpConnection,
        # Each function's budget (engine.Budget) fits its timeout with room to answer. Retrying a bulk
        # request that had landed is harmless: its writes come back stale (external versions).
        timeout=timeout,
        max_retries=retries,
        retry_on_timeout=True,
        http_compress=not local,
    )
    # Amazon OpenSearch pages by search_after on relevance; a local engine is asked who it is.
    return OpenSearchIndex(client, score_paging=None if local else True)


class OpenSearchIndex:
    """``SearchIndex`` on an OpenSearch client."""

    def __init__(self, client: OpenSearch, score_paging: bool | None = None) -> None:
        self._client = client
        self._ensured: set[str] = set()
        self._score_paging = score_paging

    def ensure_index(self, spec: SearchMapping) -> bool:
        try:
            if self._client.indices.exists_alias(name=spec.alias):
                self._ensured.add(spec.alias)
                return False
            self._client.indices.create(
                index=spec.physical,
                body={"settings": dict(spec.settings), "mappings": spec.mapping(), "aliases": {spec.alias: {}}},
            )
        except RequestError as error:
            if error.error != "resource_already_exists_exception":
                raise SearchUnavailable(f"creating {spec.physical}: {error.error}") from error
            # Another container created it between our check and our create.
            self._ensured.add(spec.alias)
            return False
        except (TransportError, EngineConnectionError) as error:
            raise SearchUnavailable(f"creating {spec.physical}: {error}") from error
        self._ensured.add(spec.alias)
        return True

    def write(self, spec: SearchMapping, writes: Sequence[Write]) -> list[Outcome | SearchWriteFailed]:
        # Writing to a missing alias would make the engine guess a mapping: create it first, once.
        if writes and spec.alias not in self._ensured:
            self.ensure_index(spec)
        return self.fill(spec.alias, writes)

    def get(self, spec: SearchMapping, doc_ids: Sequence[str]) -> dict[str, StoredDocument]:
        if not doc_ids:
            return {}
        try:
            answer = self._client.mget(index=spec.alias, body={"ids": list(doc_ids)})
        except NotFoundError:
            return {}
        except (TransportError, EngineConnectionError) as error:
            raise SearchUnavailable(f"reading {spec.alias}: {error}") from error
        return {doc["_id"]: stored(doc["_id"], doc["_source"]) for doc in answer["docs"] if doc.get("found")}

    def search(self, spec: SearchMapping, query: SearchQuery) -> SearchPage:
        filters: list[dict[str, Any]] = [{"term": {DELETED_FIELD: False}}]
        filters += [{"term": {name: value}} for name, value in query.filters.items()]
        body: dict[str, Any] = {
            "size": query.size,
            "query": {
                "bool": {
                    "must": [{"multi_match": {"query": query.text, "fields": list(query.fields)}}],
                    "filter": filters,
                }
            },
            "sort": [{"_score": "desc"}, {spec.key_field: "asc"}],
            "track_total_hits": False,
        }
        emulate = query.after is not None and not self._pages_by_score()
        if emulate:
            body["size"] = _EMULATED_WINDOW
        elif query.after is not None:
            body["search_after"] = list(query.after)
        try:
            answer = self._client.search(index=spec.alias, body=body)
        except NotFoundError:
            return SearchPage([], None)  # nothing indexed yet
        except (TransportError, EngineConnectionError) as error:
            raise SearchUnavailable(f"searching {spec.alias}: {error}") from error
        hits = answer["hits"]["hits"]
        if emulate and query.after is not None:
            hits = [hit for hit in hits if _rank(hit["sort"]) > _rank(query.after)][: query.size]
        page = [
            SearchHit(hit["_id"], float(hit["_score"] or 0.0), stored(hit["_id"], hit["_source"]).body) for hit in hits
        ]
        full = len(hits) == query.size
        return SearchPage(page, list(hits[-1]["sort"]) if full else None)

    def warm_up(self, spec: SearchMapping) -> None:
        # Searches that match nothing: the first opens the connection a container's first search would
        # open (TCP and, in AWS, TLS), and the second runs the path of an answer as the interpreter has
        # specialised it (measured: the first search ~0.15 ms faster than after one). Writing to
        # urllib3's pool directly would open the connection without a request, through private calls.
        # A failure is the first search's to meet again, and to report.
        with suppress(TransportError, EngineConnectionError):
            for _ in range(2):
                self._client.search(index=spec.alias, body=_MATCH_NOTHING, request_timeout=WARM_UP_TIMEOUT)

    def _pages_by_score(self) -> bool:
        # osmem (the embedded engine) ignores search_after when the sort starts with _score; it says
        # who it is in the root document. Asked once, and only when a next page is wanted.
        if self._score_paging is None:
            try:
                build = self._client.info().get("version", {}).get("build_hash")
            except (TransportError, EngineConnectionError) as error:
                raise SearchUnavailable(f"asking the engine who it is: {error}") from error
            self._score_paging = build != "osmem"
        return self._score_paging

    def refresh(self, spec: SearchMapping) -> None:
        try:
            self._client.indices.refresh(index=spec.alias)
        except (TransportError, EngineConnectionError) as error:
            raise SearchUnavailable(f"refreshing {spec.alias}: {error}") from error

    # -- rebuilds (make reindex): a new index beside the live one, then the alias moves --

    def create_index(self, spec: SearchMapping, name: str) -> None:
        """Create index ``name`` with the spec's mapping and no alias (fails if it exists)."""
        try:
            self._client.indices.create(index=name, body={"settings": dict(spec.settings), "mappings": spec.mapping()})
        except (TransportError, EngineConnectionError) as error:
            raise SearchUnavailable(f"creating {name}: {error}") from error

    def fill(self, name: str, writes: Sequence[Write]) -> list[Outcome | SearchWriteFailed]:
        """``write`` aimed at an index or alias by name, with no creation on the way."""
        if not writes:
            return []
        lines: list[dict[str, Any]] = []
        for write in writes:
            # A tombstone replaces a document of its own version (>=); an upsert needs a newer one (>).
            version_type = "external_gte" if isinstance(write, Remove) else "external"
            lines += [
                {
                    "index": {
                        "_index": name,
                        "_id": write.doc_id,
                        "version": write.version,
                        "version_type": version_type,
                    }
                },
                document(write),
            ]
        try:
            answer = self._client.bulk(body=lines)
        except (TransportError, EngineConnectionError) as error:
            raise SearchUnavailable(f"bulk write to {name}: {error}") from error
        return [_outcome(write, item["index"]) for write, item in zip(writes, answer["items"], strict=True)]

    def move_alias(self, spec: SearchMapping, to: str) -> list[str]:
        """Point the alias at index ``to`` alone in one atomic call, delete the indexes it left, and
        answer their names."""
        try:
            try:
                previous = sorted(set(self._client.indices.get_alias(name=spec.alias)) - {to})
            except NotFoundError:
                previous = []
            actions: list[dict[str, Any]] = [{"remove": {"index": old, "alias": spec.alias}} for old in previous]
            actions.append({"add": {"index": to, "alias": spec.alias}})
            self._client.indices.update_aliases(body={"actions": actions})
            for old in previous:
                self._client.indices.delete(index=old)
        except (TransportError, EngineConnectionError) as error:
            raise SearchUnavailable(f"moving {spec.alias} to {to}: {error}") from error
        self._ensured.add(spec.alias)
        return previous


def _rank(sort: Sequence[Any]) -> tuple[float, str]:
    """A hit's place in relevance order as an ascending key: higher score first, then the key field."""
    return -float(sort[0]), str(sort[1])


def _outcome(write: Write, item: Mapping[str, Any]) -> Outcome | SearchWriteFailed:
    status = int(item.get("status", 500))
    if status in (200, 201):
        return Outcome.APPLIED
    error = item.get("error") or {}
    kind = error.get("type", "") if isinstance(error, dict) else str(error)
    if status == 409 and kind == "version_conflict_engine_exception":
        return Outcome.STALE
    reason = error.get("reason", kind) if isinstance(error, dict) else kind
    return SearchWriteFailed(write.doc_id, status, f"{kind}: {reason}")
