"""The suite's shared set-up: SB3's logger writes in the session's temporary folder.

A model's ``learn()`` without a TensorBoard folder makes an empty folder ``/tmp/SB3-<time>`` (SB3's
``configure_logger``), and the suite calls it dozens of times; ``SB3_LOGDIR`` names the folder SB3
uses instead, which pytest removes with the rest of its temporary files.
"""

from __future__ import annotations

import os

import pytest


@pytest.fixture(autouse=True, scope="session")
def _sb3_log_folder(tmp_path_factory: pytest.TempPathFactory) -> None:
    os.environ.setdefault("SB3_LOGDIR", str(tmp_path_factory.mktemp("sb3")))
