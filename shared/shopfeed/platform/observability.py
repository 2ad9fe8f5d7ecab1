"""Logger and metrics, one instance each per container (Powertools reads POWERTOOLS_* settings).

No Tracer: the X-Ray SDK import costs more cold start than our whole budget allows; functions run
with ``Tracing: Active`` so Lambda still traces each invocation and its AWS calls' latency shows in
X-Ray's service map. Metrics are named after business events (OrderPlaced, OutboxEventPublished).
"""

from aws_lambda_powertools import Logger, Metrics

logger = Logger()
metrics = Metrics(namespace="shopfeed")
