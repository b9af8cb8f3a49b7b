"""The helpers that keep notebooks 00-02 one sitting (issue 35): notebook 00's set-up checks and BPB
yardsticks, 01's and 02's run summaries, 02's recall curve read out. Each prints what the notebook
printed before the move, and refuses a wrong input."""

from __future__ import annotations

import pytest

from tl_minimal.course import setup
from tl_minimal.training import device
from tl_minimal.training.protocols import protocol
from tl_minimal.views import tables_cost


def test_setup_prints_device_missing_devices_and_smoke(capsys, monkeypatch):
    setup.print_device("9.9.9")
    lines = capsys.readouterr().out.splitlines()
    assert [ln.split()[0] for ln in lines] == [*device.describe(), "tl_minimal"]
    assert lines[-1] == f"{'tl_minimal':12s} 9.9.9"
    setup.print_missing_devices()
    errors = capsys.readouterr().out.splitlines()
    missing = [k for k in ("cuda", "mps") if k not in device.available_devices()]
    assert [ln.split(" -> ")[0] for ln in errors] == [f"get_device({k!r})" for k in missing]
    assert all("not available here; available:" in ln for ln in errors)
    monkeypatch.setenv("TL_SMOKE", "1")
    monkeypatch.delenv("TL_MINIMAL_DATA", raising=False)
    setup.print_smoke_and_data()
    assert capsys.readouterr().out.splitlines() == [
        "smoke mode: True",
        "local data directory (TL_MINIMAL_DATA): not set, so WikiText-2 comes from Hugging Face datasets"]
    monkeypatch.setenv("TL_MINIMAL_DATA", "/somewhere/wikidata")
    setup.print_smoke_and_data()
    assert capsys.readouterr().out.splitlines()[1].endswith("set, a folder named 'wikidata'")


def test_baselines_and_training_text(capsys):
    tables_cost.print_baselines(259, 4.5891)
    assert capsys.readouterr().out.splitlines() == [
        "uniform over 259 ids: 8.017 BPB",
        "unigram (byte frequencies of the train split), on the validation split: 4.589 BPB"]
    tables_cost.print_training_text("the head", 1_000_000, protocol("lm"))
    source, seen = capsys.readouterr().out.splitlines()
    assert source == "training text: the head"
    assert seen == ("one 80-step run sees 80 x 16 windows x 128 bytes = 163,840 bytes, 16.4% of the "
                    "1,000,000 training bytes (windows may overlap)")
    with pytest.raises(ValueError, match="at least two ids"):
        tables_cost.print_baselines(1, 1.0)
    with pytest.raises(ValueError, match="has bytes"):
        tables_cost.print_training_text("x", 0, protocol("lm"))
