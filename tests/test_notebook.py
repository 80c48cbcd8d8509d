"""notebooks/quickstart.ipynb runs from top to bottom (small sizes), so it never goes stale."""

from __future__ import annotations

from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "notebooks" / "quickstart.ipynb"


def test_quickstart_notebook_runs(tmp_path, monkeypatch):
    out = tmp_path / "quickstart"
    # The kernel inherits this environment: a small tournament, two processes, files in tmp_path.
    monkeypatch.setenv("QUICKSTART_GAMES", "6")
    monkeypatch.setenv("QUICKSTART_WORKERS", "2")
    monkeypatch.setenv("QUICKSTART_OUT", str(out))
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    client = nbclient.NotebookClient(notebook, timeout=300, kernel_name="python3",
                                     resources={"metadata": {"path": str(ROOT)}})
    client.execute()

    outputs = [o for cell in notebook.cells if cell.cell_type == "code" for o in cell.get("outputs", [])]
    assert not [o for o in outputs if o.output_type == "error"]
    text = "".join(o.get("text", "") for o in outputs if o.output_type == "stream")
    assert "6 full games of 3 players" in text and "win rate [95% CI]" in text and "winner:" in text
    images = [o for o in outputs if o.output_type == "display_data" and "image/png" in o.get("data", {})]
    assert len(images) == 2
    for name in ("results.json", "results.csv", "ratings.png", "head_to_head.png"):
        assert (out / name).is_file()
