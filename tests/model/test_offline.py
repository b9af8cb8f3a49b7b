"""No network request when offline, and one line that says what was used instead (issue 52, item 7).

Without a network, ``datasets`` retried for about 30 s, printing "Name or service not known", before
``tiny_model`` fell back to the recall task. ``tl_minimal.data.offline`` decides before any request
(an offline variable, or a one-second probe of huggingface.co); these tests hold the loaders to it:
offline they return or raise within a few seconds, print no retry line, and never import ``datasets``
when its cache holds no copy.
"""

from __future__ import annotations

import sys
import time

import pytest

from tl_minimal.data import offline
from tl_minimal.data import text as data_text
from tl_minimal.data.text import DataUnavailable, Offline

RETRY_WORDS = ("Retrying", "Name or service not known", "thrown while requesting")


def no_datasets_import(monkeypatch):
    """Make `import datasets` fail loudly: the offline path must not even import it."""
    monkeypatch.setitem(sys.modules, "datasets", None)


@pytest.mark.parametrize("name", offline.OFFLINE_VARIABLES)
def test_an_offline_variable_decides_without_a_probe(monkeypatch, no_local_data, name):
    monkeypatch.setattr(offline, "_probe", lambda *a: pytest.fail("probed although a variable said offline"))
    monkeypatch.setenv(name, "1")
    assert offline.offline_reason() == f"{name}=1 is set"


def test_tl_offline_0_means_online_without_a_probe(monkeypatch, no_local_data):
    monkeypatch.setattr(offline, "_probe", lambda *a: pytest.fail("probed although TL_OFFLINE=0"))
    monkeypatch.setenv("TL_OFFLINE", "0")
    assert offline.offline_reason() is None


def test_the_probe_gives_up_within_its_limit(monkeypatch):
    """A name lookup that hangs (simulated: no test can rely on the network it runs on) or a name that
    does not exist: an answer within the limit either way."""
    start = time.perf_counter()
    reason = offline._probe("no-such-host.invalid", 443, 0.5)
    assert time.perf_counter() - start < 1.5 and "no-such-host.invalid cannot be reached" in reason
    def hangs(*args, **kwargs):
        time.sleep(2)
        raise OSError("the lookup gave up")

    monkeypatch.setattr(offline.socket, "create_connection", hangs)
    start = time.perf_counter()
    reason = offline._probe("huggingface.co", 443, 0.5)
    assert time.perf_counter() - start < 1.5 and reason == "huggingface.co did not answer within 0.5 s"


def test_the_probe_is_made_once(monkeypatch, no_local_data):
    calls = []
    monkeypatch.setattr(offline, "_probe", lambda *a: calls.append(a) or "huggingface.co cannot be reached (test)")
    assert offline.offline_reason() == offline.offline_reason() == "huggingface.co cannot be reached (test)"
    assert len(calls) == 1


def test_offline_text_raises_at_once_without_requests(monkeypatch, capfd, no_local_data):
    monkeypatch.setenv("TL_OFFLINE", "1")
    no_datasets_import(monkeypatch)
    start = time.perf_counter()
    with pytest.raises(Offline) as err:
        data_text.load_split("validation")
    assert time.perf_counter() - start < 2
    assert err.value.reason == "TL_OFFLINE=1 is set" and isinstance(err.value, DataUnavailable)
    assert "TL_MINIMAL_DATA" in str(err.value) and "nothing was requested" in str(err.value)
    out, errors = capfd.readouterr()
    assert not any(word in out + errors for word in RETRY_WORDS)


def test_a_probe_that_fails_is_offline_too(monkeypatch, no_local_data):
    monkeypatch.setattr(offline, "HUB_HOST", "no-such-host.invalid")
    no_datasets_import(monkeypatch)
    start = time.perf_counter()
    with pytest.raises(Offline, match=r"no-such-host\.invalid"):
        data_text.load_split("validation")
    assert time.perf_counter() - start < offline.PROBE_SECONDS + 1


def test_a_local_directory_is_read_without_asking(monkeypatch):
    from conftest import FIXTURE_DATA

    monkeypatch.setattr(offline, "offline_reason", lambda: pytest.fail("asked although TL_MINIMAL_DATA is set"))
    monkeypatch.setenv("TL_MINIMAL_DATA", str(FIXTURE_DATA))
    assert "local" in data_text.load_split("validation").source


def test_the_cache_only_context_puts_everything_back(monkeypatch):
    datasets_config = pytest.importorskip("datasets.config")
    hub_constants = pytest.importorskip("huggingface_hub.constants")  # installed with datasets

    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    before = (hub_constants.HF_HUB_OFFLINE, datasets_config.HF_HUB_OFFLINE)
    with offline.hub_offline():
        assert hub_constants.HF_HUB_OFFLINE is True and datasets_config.HF_HUB_OFFLINE is True
        assert hub_constants.is_offline_mode()
    assert (hub_constants.HF_HUB_OFFLINE, datasets_config.HF_HUB_OFFLINE) == before
    assert "HF_HUB_OFFLINE" not in __import__("os").environ


def test_tiny_model_says_in_one_line_what_it_used(monkeypatch, capfd, no_local_data):
    from tl_minimal.exercises import tiny_model

    monkeypatch.setenv("TL_OFFLINE", "1")
    no_datasets_import(monkeypatch)
    start = time.perf_counter()
    _, info = tiny_model("triple_latent", steps=2)
    assert time.perf_counter() - start < 10  # two training steps included
    out, errors = capfd.readouterr()
    assert info["task"] == "recall"
    assert out.splitlines() == ["WikiText-2 is not available here (offline: TL_OFFLINE=1 is set; no local or cached "
                                "copy): training on the recall task instead"]
    assert not any(word in out + errors for word in RETRY_WORDS)
