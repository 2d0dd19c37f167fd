"""Slow, obviously correct pure-Python versions of the native algorithms, checked against
the native code by the tests (nothing in the library calls them)."""
