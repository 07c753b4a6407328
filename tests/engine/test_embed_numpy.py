"""The torch-free MiniLM (engine/embed_numpy.py): same vectors as sentence-transformers (cosine
>= 0.999 on LoCoMo turns, so stored vectors stay valid), the Embedder contract, and a cold process
that never imports torch, transformers or sentence-transformers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from engine.embed_numpy import _erf, load_safetensors, shared_numpy_minilm
from engine.errors import EmbedderUnavailable

ROOT = Path(__file__).resolve().parents[2]


def locomo_turns() -> list[str]:
    env = os.environ.get("MEMCONSOLE_LOCOMO")
    path = Path(env) if env else ROOT.parent / "shared" / "data" / "locomo" / "locomo_dev.json"
    if path.is_dir():
        path = path / "locomo_dev.json"
    if not path.is_file():
        pytest.skip(f"LoCoMo not found at {path}")
    turns: list[str] = []
    for conv in json.loads(path.read_text(encoding="utf-8")):
        for key, session in conv["conversation"].items():
            if key.startswith("session_") and isinstance(session, list):
                turns.extend(t["text"] for t in session if t.get("text"))
    return turns


EDGES = [
    "",
    "   padded with spaces   ",
    "x",
    "大别山 is a mountain range; 東京 — Tōkyō, naïve café, emoji 😀",
    "word " * 400,  # longer than max_seq_length (256 tokens): truncated as sentence-transformers does
    "Short. " + "A longer sentence follows, with punctuation, numbers 1,234.5 and CAPS. " * 12,
]


@pytest.fixture(scope="module")
def fast():
    return shared_numpy_minilm()


@pytest.mark.model
def test_same_vectors_as_sentence_transformers_on_locomo(minilm, fast):
    turns = locomo_turns()
    sample = turns[:: max(1, len(turns) // 160)] + EDGES  # ~160 turns across the five conversations
    ref = minilm.embed(sample)
    got = fast.embed(sample)
    cos = (ref * got).sum(1)
    assert got.dtype == np.float32 and got.shape == ref.shape
    assert cos.min() >= 0.999, (float(cos.min()), sample[int(cos.argmin())][:80])
    assert cos.mean() >= 0.9999


def test_embedder_contract(fast):
    v = fast.embed(["the deploy runs on fridays", "", "a\ud800b", "😀"])
    assert v.dtype == np.float32 and v.shape == (4, fast.dim) == (4, 384)
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    assert fast.embed([]).shape == (0, 384)
    # Batching and order do not change a vector (texts are sorted by length and padded per batch).
    texts = [f"memory number {i} " + "about the weather " * (i % 7) for i in range(70)]
    one_by_one = np.concatenate([fast.embed([t]) for t in texts[:5]])
    together = fast.embed(texts)
    assert np.allclose(together[:5], one_by_one, atol=1e-5)
    assert np.allclose(fast.embed(texts[::-1])[::-1], together, atol=1e-5)


def test_meaning(fast):
    a, b, c = fast.embed(
        [
            "The user prefers dark mode",
            "which colour theme does the user like",
            "the quarterly tax filing deadline",
        ]
    )
    assert a @ b > a @ c + 0.1


def test_erf_is_accurate():
    import math

    x = np.linspace(-6, 6, 2001, dtype=np.float32)
    want = np.array([math.erf(float(t)) for t in x])
    assert np.abs(_erf(x) - want).max() < 5e-7


def test_refuses_what_it_cannot_run(tmp_path):
    import engine.embed_numpy as m

    model = Path(shared_numpy_minilm().path)
    for name in ("config.json", "modules.json", "sentence_bert_config.json", "tokenizer.json"):
        (tmp_path / name).write_bytes((model / name).read_bytes())
    (tmp_path / "1_Pooling").mkdir()
    pool = json.loads((model / "1_Pooling" / "config.json").read_text())
    (tmp_path / "1_Pooling" / "config.json").write_text(json.dumps({**pool, "pooling_mode_cls_token": True}))
    with pytest.raises(EmbedderUnavailable, match="pooling"):
        m.NumpyMiniLM(str(tmp_path))
    (tmp_path / "1_Pooling" / "config.json").write_text(json.dumps(pool))
    with pytest.raises(EmbedderUnavailable, match="model.safetensors"):
        m.NumpyMiniLM(str(tmp_path))  # no weights
    bad = tmp_path / "model.safetensors"
    bad.write_bytes((10**12).to_bytes(8, "little") + b"{}")
    with pytest.raises(EmbedderUnavailable, match="header"):
        load_safetensors(str(bad))
    hdr = json.dumps({"w": {"dtype": "F32", "shape": [4, 4], "data_offsets": [0, 64]}}).encode()
    bad.write_bytes(len(hdr).to_bytes(8, "little") + hdr + b"\0" * 16)
    with pytest.raises(EmbedderUnavailable, match="outside"):
        load_safetensors(str(bad))
    with pytest.raises(EmbedderUnavailable, match="not found"):
        m.NumpyMiniLM(str(tmp_path / "absent"))


def test_cold_process_imports_nothing_heavy():
    """Loading the model and embedding a query in a fresh interpreter pulls in no torch,
    transformers or sentence-transformers (the cost a cold CLI call used to pay)."""
    code = (
        "import sys\n"
        "from engine.embed_numpy import NumpyMiniLM\n"
        "v = NumpyMiniLM().embed(['cold query'])\n"
        "assert v.shape == (1, 384)\n"
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in "
        "('torch', 'transformers', 'sentence_transformers'))\n"
        "print(heavy)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120, check=True
    )
    assert out.stdout.strip() == "[]", out.stdout


def test_handle_default_is_the_numpy_model_and_falls_back(monkeypatch, tmp_path):
    import engine.embed as embed
    from engine.embed import EmbedderHandle, HashEmbedder
    from engine.embed_numpy import NumpyMiniLM

    for spec in ("default", "numpy"):
        h = EmbedderHandle(spec)
        assert isinstance(h.require(), NumpyMiniLM) and h.state == "ready"
    # A model folder the numpy path cannot run: "default" falls back to sentence-transformers
    # (here a stand-in), "numpy" fails and the engine stays keyword-only.
    import engine.embed_numpy as embed_numpy
    from engine.errors import EmbedderUnavailable

    def cannot(path=None):
        raise EmbedderUnavailable("unsupported encoder (a stand-in)")

    stand_in = HashEmbedder()
    stand_in.name = "all-MiniLM-L6-v2"
    monkeypatch.setattr(embed, "shared_minilm", lambda path=None: stand_in)
    monkeypatch.setattr(embed_numpy, "shared_numpy_minilm", cannot)
    h = EmbedderHandle("default")
    assert h.require() is stand_in
    h = EmbedderHandle("numpy")
    assert not h.wait() and h.state == "failed" and "unsupported" in (h.error or "")
    # A folder without the model's files is refused before either runs (its checksums, #26).
    h = EmbedderHandle("default", str(tmp_path / "absent"))
    assert not h.wait() and h.state == "failed" and "missing" in (h.error or "")
    with pytest.raises(ValueError):
        EmbedderHandle("onnx")


def test_small_batches_run_on_one_blas_thread(fast):
    from engine.embed_numpy import SMALL_BATCH_TOKENS

    if fast._blas is None:
        pytest.skip("threadpoolctl sees no BLAS here")
    blas = [i for i in fast._blas.info() if i["user_api"] == "blas"]
    with fast._threads(40):
        assert all(i["num_threads"] == 1 for i in fast._blas.info() if i["user_api"] == "blas")
    assert [i["num_threads"] for i in fast._blas.info() if i["user_api"] == "blas"] == [
        i["num_threads"] for i in blas
    ]
    with fast._threads(SMALL_BATCH_TOKENS + 1):
        assert [i["num_threads"] for i in fast._blas.info() if i["user_api"] == "blas"] == [
            i["num_threads"] for i in blas
        ]
