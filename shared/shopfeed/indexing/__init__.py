"""Where the contexts' search indexes meet: the search sync worker writes every context's index, so it
knows each one's mapping (by alias) and nothing else of them. Commerce and the feed queue their index
writes themselves (``platform.search.sync``); as ``accounts`` does for the user routes, this package
imports only what each context exposes for it (its ``SearchMapping``)."""
