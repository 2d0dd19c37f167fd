"""Repository reconnaissance (spec 03): the deterministic repository map built before the
model runs."""
