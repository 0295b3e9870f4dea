"""Root conftest: the plugin's own tests drive pytest in-process with ``pytester``."""

pytest_plugins = ["pytester"]


def pytest_configure(config):
    """The marker registered here, not in pyproject.toml: a run of the shipped suites from an editable install,
    in another folder (``gpuperf run``), loads this file without the project's ini and would warn of it."""
    config.addinivalue_line("markers", "quiet_host: judges PoCL timings (a planted slowdown, a gate check, the shipped "
                            "suites): scripts/run_tests.sh runs these one at a time after the others, which run side "
                            "by side")


def pytest_collection_modifyitems(config, items):
    """The shipped suites judge PoCL timings against their baseline: they are ``quiet_host`` tests
    (scripts/run_tests.sh runs them one at a time, after the tests that may run side by side)."""
    import pytest

    for item in items:
        # by the test file's folder, not its id: a test's parameters may name a suite's path
        folder = item.path.parent
        if folder.name == "suites" and folder.parent.name == "pytest_gpuperf":
            item.add_marker(pytest.mark.quiet_host)
