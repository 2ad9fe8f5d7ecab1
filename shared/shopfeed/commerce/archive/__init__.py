"""The order archive (ECOM-011): the archiver job, its repository, restoring an archived order, and the
backfill that gives existing orders and products the index keys the archive and the snapshots read."""
