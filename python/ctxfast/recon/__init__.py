"""Repository reconnaissance (spec 03): the deterministic map of a repository built before the model runs."""
