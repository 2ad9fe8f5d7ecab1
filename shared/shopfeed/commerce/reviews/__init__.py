"""Product reviews: use cases, repository, API schemas, and the stream consumer that counts ratings
onto their product."""
