"""The benchmark suites, shipped with the plugin: ``pytest --pyargs pytest_gpuperf.suites`` (or
``gpuperf run``) runs them from any directory. Each test parametrizes, calls the library and records;
the protocols live in the library's areas. Their test ids are written ``suites/<file>::<test>``
wherever the package is installed (``session.canonical_test``), so baselines match across checkouts."""
