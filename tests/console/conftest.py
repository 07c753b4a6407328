"""Shell tests share the console fixtures of tests/screens."""

from tests.screens.conftest import seeded  # noqa: F401
