"""Logger and metrics, one instance each per container (Powertools reads POWERTOOLS_* settings).

No Tracer: the X-Ray SDK import costs more cold start than our whole budget allows; functions run
with ``Tracing: Active`` so Lambda still traces each invocation and its AWS calls' latency shows in
X-Ray's service map. Metrics are named after business events (OrderPlaced, OutboxEventPublished).
"""

import os
import warnings

from aws_lambda_powertools import Logger, Metrics

logger = Logger()
metrics = Metrics(namespace="shopfeed")

# Most requests publish no business metric (every read): Powertools warns then, once per container, and
# Python formats that warning by reading Powertools' source file, ~1-4 ms of the first such request
# (decision 216). The filter is the one Powertools' metrics documentation gives.
warnings.filterwarnings("ignore", "No application metrics to publish*")

# Lambda sets it for each invocation when tracing is active (Tracing: Active in template.yaml).
TRACE_ENVIRONMENT = "_X_AMZN_TRACE_ID"


def trace_header() -> str | None:
    """The X-Ray trace header of the running invocation, read per call (it changes every invocation),
    so what this invocation sends (PutEvents entries) joins its trace."""
    return os.environ.get(TRACE_ENVIRONMENT) or None
