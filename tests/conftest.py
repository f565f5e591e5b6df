"""Shared fixtures: the ``dockrecon`` command line driven in-process."""
from __future__ import annotations

import pytest
from click.testing import CliRunner, Result


@pytest.fixture
def cli_run():
    """``cli_run(*args) -> click.testing.Result``: run ``dockrecon ARGS`` in-process (stdout
    and stderr apart in ``.stdout`` / ``.stderr``, the exit code in ``.exit_code``)."""
    from recon.app.cli import cli

    runner = CliRunner()

    def run(*args: str) -> Result:
        return runner.invoke(cli, [str(a) for a in args])

    return run


@pytest.fixture(autouse=True, scope="session")
def _own_proposal_cache(tmp_path_factory):
    """Learned proposals (recon.amortized) come from a cache of the test session's own, so a
    proposal the user trained never changes what a test's reconstruction does."""
    import os

    from recon.amortized import CACHE_ENV

    old = os.environ.get(CACHE_ENV)
    os.environ[CACHE_ENV] = str(tmp_path_factory.mktemp("dockrecon-cache"))
    yield
    if old is None:
        os.environ.pop(CACHE_ENV, None)
    else:
        os.environ[CACHE_ENV] = old
