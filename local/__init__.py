"""The local stack: shopfeed on one machine with no Docker and no AWS (``make dev``)."""

from pathlib import Path

# Kept across runs, never committed (.gitignore): the token signing key and the local secrets.
STATE_DIR = Path(__file__).resolve().parent.parent / ".local-stack"
