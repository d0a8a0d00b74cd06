"""T2T's ``attention_variables_3d`` (``layers/attention.py``, ``layers/initializers.py``).

T2T 1.15.7 (``layers/common_attention.py``, ``compute_attention_component`` and
``multihead_attention`` with ``vars_3d``) draws q, k, v as [d, heads, d/heads] normals of
deviation d**-0.5 (q: times (d/heads)**-0.5), the output ``o`` [heads, d/heads, d] by the model's
initializer over that 3-D shape, and scales no query at run time. Its own train dirs with it
(a ``dot_product`` and a ``dot_product_relative`` model), their EVAL logits and greedy
decodes, and the statistics of its fresh draws are in tests/data/t2t_reference/attention_3d
(tools/t2t_reference/make_t2t_attention_3d_reference.py, README there).
"""

import json

import keras
import numpy as np
import pytest
import tensorflow as tf

from t2t_repro import registry
from t2t_repro.checkpoints.loading import checkpoint_reader
from t2t_repro.decoding.search import SearchConfig, Searcher
from t2t_repro.hparams_lib.build import create_hparams
from t2t_repro.layers.attention import MultiHeadAttention
from t2t_repro.models.layer_configs import stack_config
from t2t_repro.optimizers import make_optimizer
from t2t_repro.t2t_import import import_t2t_dir
from t2t_repro.t2t_import.hparams_map import map_hparams
from t2t_repro.t2t_import.source import read_t2t_dir
from t2t_repro.t2t_import.variables import CheckpointValues, model_entries
from tests.float_bounds import gamma
from tests.t2t_fixtures import REFERENCE, load_imported, reference
from tests.test_t2t_optimizers import ARRAYS as OPTIMIZER_ARRAYS
from tests.test_t2t_optimizers import META as OPTIMIZER_META
from tests.test_t2t_optimizers import OPS, StepTable, _hparams
from tests.test_transformer_knobs import compare_decodes, tolerance

FOLDER = REFERENCE / "attention_3d"
REF = "attention_3d/t2t_1.15.7_attention_3d.npz"
SIGMAS = 6  # statistical checks: this many standard errors (a false alarm ~1e-9 per check)


@pytest.fixture(scope="module")
def ref():
    return reference(REF)


@pytest.fixture(scope="module")
def dot_model(tmp_path_factory, ref):
    """``t2t-import`` of T2T's dot-product train dir (its 3-D Adam slots too), restored as
    ``t2t-decoder`` and ``t2t-trainer`` restore it."""
    target = tmp_path_factory.mktemp("vars_3d") / "train"
    result = import_t2t_dir(
        str(FOLDER / str(ref["dot_train_dir"])), str(target), log=lambda _: None
    )
    assert result.with_optimizer and result.step == int(ref["train_steps"])
    assert result.imported.hparams.attention_variables_3d is True
    return load_imported(target)


def relative_model(ref):
    """T2T's relative train dir's weights mapped into our model (``t2t_import/variables.py``:
    what ``t2t-import`` assigns), without writing an output dir."""
    source = read_t2t_dir(str(FOLDER / str(ref["relative_train_dir"])))
    values = CheckpointValues(checkpoint_reader(source.prefix))
    sizes = {"input_vocab_size": 13, "target_vocab_size": 13, "target_space_id": 0}
    imported = map_hparams(source.hparams, source.flags["hparams_set"], sizes)
    assert imported.overrides.startswith("attention_variables_3d=True,"), imported.overrides
    model = registry.model("transformer")(imported.hparams)
    model.build()
    for entry in model_entries(model):
        entry.variable.assign(values.value(entry))
    assert not [n for n in values.unused() if not n.endswith(("/Adam", "/Adam_1"))]
    return model


def attentions(model) -> list:
    stacks = [model.decoder] + ([model.encoder] if model.has_input else [])
    names = ("self_attention", "encdec_attention")
    return [
        getattr(layer, n).sublayer
        for stack in stacks
        for layer in stack.layers_
        for n in names
        if hasattr(layer, n)
    ]


@pytest.mark.parametrize("case", ["dot", "relative"])
def test_imported_t2t_model_gives_t2ts_logits(dot_model, ref, case):
    """Every attention (encoder and decoder self-attention, encoder-decoder attention; relative
    self-attention too) with T2T's 3-D q/k/v/o reshaped: T2T's EVAL logits within float32
    rounding."""
    model = dot_model if case == "dot" else relative_model(ref)
    assert len(attentions(model)) == 6 and all(a.vars_3d for a in attentions(model))
    assert (model.hparams.max_relative_position > 0) == (case == "relative")
    batch = {side: ref[f"{case}_{side}"] for side in ("inputs", "targets")}
    want = ref[f"{case}_logits"]
    got = model(batch).numpy()
    np.testing.assert_allclose(got, want, atol=tolerance(model, batch, want), rtol=0)


def test_greedy_decode_is_t2ts(dot_model, ref):
    """T2T's cached ``_fast_decode`` (its encoder-decoder keys and values from the 3-D k, v):
    our search's ids and scores."""
    config = SearchConfig(beam_size=1, alpha=0.0, extra_length=int(ref["extra_length"]))
    batch = {side: ref[f"dot_{side}"] for side in ("inputs", "targets")}
    ids, scores = Searcher(dot_model, config)(batch["inputs"])
    want_ids = ref["dot_greedy_ids"]
    atol = 2 * want_ids.shape[1] * tolerance(dot_model, batch, ref["dot_logits"])
    compare_decodes(ids.numpy(), scores.numpy(), want_ids, ref["dot_greedy_scores"], atol)
    assert len({tuple(row) for row in want_ids}) == 3  # the decodes depend on the input


def deviation_bound(sigma: float, n: int, kurtosis: float) -> float:
    """SIGMAS standard errors of a sample deviation of n draws: sigma * sqrt((kurtosis - 1)
    / (4 n)) (the delta method; kurtosis 3 for a normal, 1.8 for a uniform)."""
    return SIGMAS * sigma * np.sqrt((kurtosis - 1) / (4 * n))


def test_fresh_draws_are_t2ts(ref):
    """A fresh model's q, k, v are T2T's normals (not truncated: some beyond 3 deviations) and
    its output kernel T2T's uniform over the 3-D shape's fans (uniform_unit_scaling: fan_avg
    (h*dph + h*d) / 2, not the 2-D kernel's (h*dph + d) / 2); T2T's own draws (the reference,
    at the same sizes) agree with the same formulas."""
    hidden, heads = (int(n) for n in ref["init_shapes"][0][:2])
    dph = hidden // heads
    sizes = f"hidden_size={hidden},num_heads={heads},attention_variables_3d=true"
    cfg = stack_config(create_hparams("transformer_tiny", sizes), 2)  # as the model's layers
    assert cfg.attention_variables_3d
    layers = [
        MultiHeadAttention(
            cfg.num_heads,
            cfg.key_channels,
            cfg.value_channels,
            cfg.hidden_size,
            kernel_initializer=cfg.initializer,
            vars_3d=cfg.attention_variables_3d,
        )
        for _ in range(6)  # T2T's statistics: 2 encoder, 2 + 2 decoder attentions
    ]
    for layer in layers:
        layer.build((1, 1, hidden))
    limit = np.sqrt(3 / ((heads * dph + heads * hidden) / 2))
    want = {
        "q": (hidden**-0.5 * dph**-0.5, 3.0),
        "k": (hidden**-0.5, 3.0),
        "v": (hidden**-0.5, 3.0),
        "o": (limit / np.sqrt(3), 1.8),
    }
    layer_of = {"q": "q", "k": "k", "v": "v", "o": "output_transform"}
    for kind, t2t_stats in zip(ref["init_kinds"], ref["init_stats"], strict=True):
        sigma, kurtosis = want[str(kind)]
        values = np.concatenate(
            [getattr(a, layer_of[str(kind)]).kernel.numpy().ravel() for a in layers]
        )
        for n, mean, std, largest in (
            (values.size, values.mean(), values.std(), np.abs(values).max()),
            t2t_stats,
        ):
            n = int(n)
            assert n == 6 * hidden * hidden, kind
            assert abs(std - sigma) <= deviation_bound(sigma, n, kurtosis), (kind, std, sigma)
            assert abs(mean) <= SIGMAS * sigma / np.sqrt(n), (kind, mean)
            if kind == "o":
                assert largest <= limit * (1 + 1e-6), (kind, largest, limit)
            else:
                assert largest > 3 * sigma, (kind, largest)


@pytest.mark.parametrize("relative", [0, 2])
def test_no_query_scaling_at_run_time(relative):
    """A vars_3d layer equals the default layer whose q kernel is its own times
    depth_per_head**0.5: the scale is in the weights, none at run time (relative logits
    included). depth_per_head 4: scaling by 0.5 is exact, so the two are the same bits."""
    common = dict(max_relative_position=relative, name="multihead_attention")
    plain = MultiHeadAttention(2, 8, 8, 8, **common)
    folded = MultiHeadAttention(2, 8, 8, 8, vars_3d=True, **common)
    rng = np.random.default_rng(0)
    x = tf.constant(rng.normal(size=[2, 5, 8]), tf.float32)
    memory = tf.constant(rng.normal(size=[2, 3, 8]), tf.float32)
    plain(x), folded(x)
    for a, b in zip(plain.weights, folded.weights, strict=True):
        b.assign(a * 0.5 if b is folded.q.kernel else a)
    for args in ((x,), (x, memory)):
        if relative and len(args) == 2:
            continue
        want, got = plain(*args).numpy(), folded(*args).numpy()
        np.testing.assert_array_equal(got, want)
        folded.q.kernel.assign(plain.q.kernel)  # with the unscaled kernel: another output
        assert np.abs(folded(*args).numpy() - want).max() > 1e-3
        folded.q.kernel.assign(plain.q.kernel * 0.5)


def test_default_path_keeps_the_scaling_and_2d_draws():
    """Off (T2T's default), the layers are as before: no vars_3d in their config, the model's
    initializer on each kernel."""
    layer = MultiHeadAttention(2, 8, 8, 8)
    assert not layer.vars_3d and "vars_3d" not in layer.get_config()
    assert type(layer.q.kernel_initializer).__name__ == "GlorotUniform"
    restored = MultiHeadAttention.from_config(
        MultiHeadAttention(2, 8, 8, 8, vars_3d=True).get_config()
    )
    assert (
        restored.vars_3d
        and type(restored.q.kernel_initializer).__name__ == "AttentionComponentNormal"
    )


def test_ctranslate2_spec_folds_the_scale_back(dot_model):
    """CTranslate2 scales queries at run time: the exported q is ours times dph**0.5."""
    from t2t_repro.serving.ctranslate2_export import build_spec

    model = dot_model
    spec, _ = build_spec(model, max_positions=16)
    for stack, layers in ((spec.encoder, model.encoder), (spec.decoder, model.decoder)):
        attention = layers.layers_[0].self_attention.sublayer
        q = stack.layer[0].self_attention.linear[0].weight.numpy()[: attention.key_channels]
        dph = attention.key_channels // attention.num_heads
        np.testing.assert_array_equal(q, attention.q.kernel.numpy().T * np.float32(dph**0.5))


def test_adafactor_factors_t2ts_3d_shape():
    """T2T's Adafactor factors a 3-D q over its last two dimensions (heads, depth_per_head),
    not our 2-D kernel's; the kernel marked with T2T's shape (as the layer marks it) takes
    T2T's update: its optimizer reference's rank-3 variable, held here as a [d, h * dph]
    kernel (tests/test_t2t_optimizers.py's data and bound)."""
    meta, ref = json.loads(OPTIMIZER_META.read_text()), dict(np.load(OPTIMIZER_ARRAYS))
    case, name = "adafactor", "body/attention/q"
    shape = tuple(meta["variables"][name])
    assert len(shape) == 3 and meta["cases"][case]["hparams"] == {}
    names = list(meta["variables"])
    size = sum(int(np.prod(s)) for s in meta["variables"].values())
    for marked in (True, False):
        optimizer = make_optimizer(_hparams(meta["cases"][case]), StepTable(ref["learning_rates"]))
        variables = []
        for n in names:
            init = ref[f"init/{n}"]
            variables.append(keras.Variable(init.reshape(shape[0], -1) if n == name else init))
            if n == name and marked:
                variables[-1].t2t_shape = shape
        optimizer.build(variables)
        kernel = variables[names.index(name)]
        previous = ref[f"init/{name}"].astype(np.float64)
        magnitude, beyond = np.zeros_like(previous), []
        for step in range(meta["steps"]):
            grads = [tf.constant(ref[f"grad/{step}/{n}"]) for n in names]
            grads[names.index(name)] = tf.reshape(grads[names.index(name)], kernel.shape)
            optimizer.apply_gradients(zip(grads, variables, strict=True))
            theirs = ref[f"{case}/{step}/{name}"].astype(np.float64)
            magnitude += np.abs(previous) + np.abs(theirs)
            beyond.append(
                np.abs(kernel.numpy().reshape(shape) - theirs) > gamma(OPS + size) * magnitude
            )
            previous = theirs
        assert not np.any(beyond) if marked else np.any(beyond), marked  # unmarked: another update


def test_a_run_of_the_other_layout_is_neither_warm_started_nor_resumed(tmp_path):
    """T2T names the attention variables by the knob (``q/kernel`` or ``q``): its restore
    fails across the change and its warm start leaves them fresh. Here the kernels have the
    same shapes either way, and would be read with the other meaning: refused in one line."""
    from types import SimpleNamespace

    from t2t_repro.checkpoints.errors import CheckpointError
    from t2t_repro.hparam import HParamsError
    from t2t_repro.training.run_hparams import _check_variable_layout
    from t2t_repro.training.warm_start import check_compatible

    sizes = dict(input_vocab_size=13, target_vocab_size=13)
    flat = create_hparams("transformer_tiny", **sizes)
    three_d = create_hparams("transformer_tiny", "attention_variables_3d=true", **sizes)
    (tmp_path / "hparams.json").write_text(flat.to_json())
    with pytest.raises(CheckpointError, match="attention_variables_3d=False") as e:
        check_compatible(str(tmp_path / "ckpt-1"), three_d, None, "")
    assert "\n" not in str(e.value)
    check_compatible(str(tmp_path / "ckpt-1"), flat, None, "")  # the same layout: accepted
    cfg = SimpleNamespace(output_dir=str(tmp_path))
    with pytest.raises(HParamsError, match="new --output_dir"):
        _check_variable_layout(cfg, flat, three_d)
    _check_variable_layout(cfg, three_d, three_d)
