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
