"""Root conftest: the plugin's own tests drive pytest in-process with ``pytester``."""

pytest_plugins = ["pytester"]
