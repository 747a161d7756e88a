"""The `nuphar` Python module (issue 16): the tool pipeline through nuphar.tools, then
InferenceSession.run against the C++ runtime (perf_test --dump-outputs); clear exceptions for bad
feeds and options; one session run from two Python threads. Run by ctest (python_api_test) with
PYTHONPATH=build/python."""
import json
import os
import subprocess
import sys
import threading

import numpy as np
import pytest

import nuphar

BIN = os.environ["NUPHAR_BIN_DIR"]
SHARED = os.environ["NUPHAR_SHARED_DIR"]
SILERO = os.path.join(SHARED, "models", "silero_vad_v5.onnx")
sys.path.insert(0, os.path.join(SHARED, "peer"))
import make_rnn_model  # noqa: E402  (../shared/peer, Debian's python3-onnx)


def cxx_outputs(model, feeds, tmp_path, tag):
    """The C++ runtime's outputs for `feeds`: perf_test --input-dir/--dump-outputs."""
    in_dir, out_dir = tmp_path / (tag + "_in"), tmp_path / (tag + "_out")
    in_dir.mkdir()
    for name, a in feeds.items():
        a.tofile(str(in_dir / (name + ".bin")))
        (in_dir / (name + ".json")).write_text(json.dumps({"name": name, "dtype": str(a.dtype), "shape": list(a.shape)}))
    subprocess.run([os.path.join(BIN, "perf_test"), "-r", "1", "--warmup", "0", "--input-dir", str(in_dir),
                    "--dump-outputs", str(out_dir), str(model)], check=True, stdout=subprocess.DEVNULL)
    outs = {}
    for f in sorted(out_dir.glob("*.json")):
        if f.name == "manifest.json":
            continue
        meta = json.loads(f.read_text())
        outs[meta["name"]] = np.fromfile(str(f.with_suffix(".bin")), dtype=meta["dtype"]).reshape(meta["shape"])
    return outs


@pytest.fixture(scope="module")
def lstm_models(tmp_path_factory):
    d = tmp_path_factory.mktemp("pipeline")
    import onnx
    m = make_rnn_model.make_model(op="lstm", input_dim=16, hidden_dim=32, layers=2, bidirectional=True,
                                  seq_len="seq", batch=1)
    paths = {k: d / ("lstm_%s.onnx" % k) for k in ("float", "scan", "si", "int8")}
    onnx.save(m, str(paths["float"]))
    nuphar.tools.model_editor(paths["float"], paths["scan"], mode="to_scan")
    nuphar.tools.symbolic_shape_infer(paths["scan"], paths["si"], auto_merge=True)
    nuphar.tools.model_quantizer(paths["si"], paths["int8"], only_for_scan=True)
    return paths


def lstm_feed(seed, seq=7):
    return {"input": np.random.RandomState(seed).rand(seq, 1, 16).astype(np.float32) - 0.5}


def test_pipeline_matches_cxx_runtime(lstm_models, tmp_path):
    feeds = lstm_feed(0)
    ref_float = None
    for kind in ("float", "scan", "int8"):
        sess = nuphar.InferenceSession(str(lstm_models[kind]))
        names = [o.name for o in sess.get_outputs()]
        got = sess.run(names, feeds)
        want = cxx_outputs(lstm_models[kind], feeds, tmp_path, kind)
        assert set(want) == set(names)
        for name, value in zip(names, got):
            assert value.dtype == want[name].dtype and value.shape == want[name].shape, name
            assert np.array_equal(value, want[name]), (kind, name)
        if ref_float is None:
            ref_float = got
        else:  # the rewritten models compute the LSTM (int8 within quantization error)
            tol = 1e-5 if kind == "scan" else 5e-2
            for a, b in zip(ref_float, got):
                np.testing.assert_allclose(a, b, atol=tol)


def test_session_from_bytes_and_node_args(lstm_models):
    data = lstm_models["si"].read_bytes()
    sess = nuphar.InferenceSession(data, settings="nuphar_num_threads:1")
    (x,) = sess.get_inputs()
    assert (x.name, x.type, x.shape) == ("input", "tensor(float)", ["seq", 1, 16])
    assert all(o.type == "tensor(float)" for o in sess.get_outputs())
    out = sess.run(None, lstm_feed(1))
    assert len(out) == len(sess.get_outputs())
    silero = nuphar.InferenceSession(SILERO)
    assert [i.shape for i in silero.get_inputs()] == [[None, None], [2, None, 128], []]


def silero_feed(seed):
    rng = np.random.RandomState(seed)
    return {"input": rng.rand(1, 512).astype(np.float32) - 0.5,
            "state": np.zeros((2, 1, 128), np.float32), "sr": np.array(16000, np.int64)}


def test_bad_feeds_raise_clear_errors():
    sess = nuphar.InferenceSession(SILERO)
    feeds = silero_feed(0)
    with pytest.raises(nuphar.NupharError, match="input 'input' has type double, the model expects float"):
        sess.run(None, dict(feeds, input=feeds["input"].astype(np.float64)))
    with pytest.raises(nuphar.NupharError, match="input 'state' has rank 2"):
        sess.run(None, dict(feeds, state=np.zeros((2, 128), np.float32)))
    with pytest.raises(nuphar.NupharError, match="'audio' is not an input of the model"):
        sess.run(None, dict(feeds, audio=feeds["input"]))
    with pytest.raises(nuphar.NupharError, match="missing input 'sr'"):
        sess.run(None, {k: v for k, v in feeds.items() if k != "sr"})
    with pytest.raises(nuphar.NupharError, match="nope"):
        sess.run(["nope"], feeds)
    with pytest.raises(nuphar.InvalidArgument, match="numpy dtype"):
        sess.run(None, dict(feeds, input=np.array([["a"]])))
    with pytest.raises(nuphar.InvalidArgument):
        sess.run(None, [feeds["input"]])
    # A Fortran-order (not C-contiguous) feed is accepted and means its values.
    state = np.random.RandomState(5).rand(2, 1, 128).astype(np.float32) * 0.1
    fortran = np.asfortranarray(state)
    assert not fortran.flags.c_contiguous
    assert np.array_equal(sess.run(None, dict(feeds, state=fortran))[1], sess.run(None, dict(feeds, state=state))[1])


def test_tool_and_load_errors(tmp_path, lstm_models):
    with pytest.raises(nuphar.NupharError, match="/nonexistent/m.onnx"):
        nuphar.InferenceSession("/nonexistent/m.onnx")
    out = tmp_path / "out.onnx"
    with pytest.raises(nuphar.InvalidArgument, match="unknown mode 'to_jit'"):
        nuphar.tools.model_editor(lstm_models["float"], out, mode="to_jit")
    with pytest.raises(TypeError):
        nuphar.tools.model_quantizer(lstm_models["si"], out, no_such_flag=True)
    with pytest.raises(nuphar.InvalidArgument, match="int4"):
        nuphar.tools.model_quantizer(lstm_models["si"], out, default_qcfg="int4")
    with pytest.raises(nuphar.NupharError, match="/nonexistent/in.onnx"):
        nuphar.tools.symbolic_shape_infer("/nonexistent/in.onnx", out)
    assert not out.exists()


def test_two_threads_share_one_session(lstm_models):
    sess = nuphar.InferenceSession(str(lstm_models["int8"]))
    feeds = [lstm_feed(10 + t, seq=20) for t in range(2)]
    expected = [sess.run(None, f) for f in feeds]
    errors = []

    def worker(t):
        try:
            for _ in range(15):
                got = sess.run(None, feeds[t])
                if not all(np.array_equal(a, b) for a, b in zip(got, expected[t])):
                    errors.append("thread %d: wrong result" % t)
        except Exception as e:  # surfaced below; a thread's exception is otherwise lost
            errors.append(repr(e))

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(2)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert errors == []
