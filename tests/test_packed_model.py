"""The Transformer on packed batches (T2T's ``<side>_segmentation`` / ``<side>_position``
features) against T2T 1.15.7 itself.

tests/data/t2t_reference/packed holds T2T's EVAL logits on one packed batch (2 rows of 3 and 4
examples; row 0 with 2 spacing zeros between examples, row 1 with none, as T2T's
``pack_dataset`` and ``Text2TextProblem`` pack; trailing padding; inputs of 16 positions,
targets of 14), and T2T's logits of each example alone, for four T2T train dirs: ``timing``
(``transformer_tiny``, pos=timing, use_pad_remover; made for this), ``emb`` (learned
positions), ``lm`` (no inputs) and ``relative`` (``dot_product_relative``); made by
tools/t2t_reference/packed_reference.py (``make_t2t_reference.py --only=packed``), whose
docstring says what T2T does with the features. In short: examples never attend to each other,
but T2T shifts the whole row right, so a segment that follows another without spacing is fed
the previous example's EOS at its first target, and all its logits (its later targets attend
to the first) differ from the example's alone. Elsewhere packing isolates the examples.

Packed logits are compared with T2T's everywhere, padding and spacing included (where T2T's
padding attends to padding: ``attention_bias_same_segment`` of segment 0); an example alone is
compared at its own targets.
"""

import hashlib

import numpy as np
import pytest

from tests.t2t_fixtures import REFERENCE, load_imported, reference, shared_import
from tests.test_loss_rows import kept_rows_loss_rtol

REF = "packed/t2t_1.15.7_packed_logits.npz"
CASES = ("timing", "emb", "lm", "relative")
SIDES = {"timing": ("inputs", "targets"), "emb": ("inputs", "targets"), "lm": ("targets",)}
SIDES["relative"] = SIDES["timing"]
REGENERATE = "run tools/t2t_reference/make_t2t_reference.py --only=packed (README there)"


@pytest.fixture(scope="module")
def ref():
    return reference(REF)


@pytest.fixture(scope="module", params=CASES)
def case(request, ref):
    """(name, our model imported from the case's T2T train dir, its T2T import result)."""
    name = request.param
    out, result = shared_import(REFERENCE / str(ref[f"{name}_train_dir"]))  # (read only)
    return name, load_imported(out), result


def packed_features(ref, name) -> dict:
    """The case's packed features, as the model reads them (int32 [B, L])."""
    sides = SIDES[name]
    keys = [f"{s}{suffix}" for s in sides for suffix in ("", "_segmentation", "_position")]
    return {k: ref[k].astype(np.int32) for k in keys}


def segments(ref) -> list[tuple[int, int]]:
    """(row, segment id) of every example of the batch, in row order."""
    seg = ref["targets_segmentation"]
    return [(r, s) for r in range(seg.shape[0]) for s in range(1, seg[r].max() + 1)]


def fed_another_example(ref) -> np.ndarray:
    """[B, Lt] bool: the targets of a segment whose first target directly follows another
    example's (no spacing): T2T's shift right feeds it that example's last id (EOS)."""
    seg = ref["targets_segmentation"]
    first = np.zeros_like(seg, bool)
    first[:, 1:] = (seg[:, 1:] > 0) & (seg[:, :-1] > 0) & (seg[:, 1:] != seg[:, :-1])
    out = np.zeros_like(first)
    for r, t in zip(*np.nonzero(first), strict=True):
        out[r] |= seg[r] == seg[r, t]
    return out


def tolerance(model, ref, want) -> float:
    """Two float32 evaluations (T2T's graph, ours; or our packed and unpacked passes) of the
    same logits: the chain of contractions both stacks run at these lengths (the first-order
    bound of ``tests/float_bounds.py``), relative to the largest T2T logit."""
    lengths = ref["inputs"].shape[1], ref["targets"].shape[1]
    return kept_rows_loss_rtol(model.hparams, *lengths) * float(np.abs(want).max())


def unpacked_batch(ref, name) -> tuple[dict, list]:
    """Every example alone in one padded batch without packing features, and where each
    example's targets sit in the packed batch."""
    rows, places = {side: [] for side in SIDES[name]}, []
    for r, s in segments(ref):
        for side in rows:
            rows[side].append(ref[side][r][ref[f"{side}_segmentation"][r] == s])
        places.append((r, ref["targets_segmentation"][r] == s))
    batch = {}
    for side, seqs in rows.items():
        batch[side] = np.zeros([len(seqs), max(map(len, seqs))], np.int32)
        for i, seq in enumerate(seqs):
            batch[side][i, : len(seq)] = seq
    return batch, places


def our_unpacked_logits(model, ref, name) -> np.ndarray:
    """Our logits of each example alone, at its packed positions (0 elsewhere)."""
    batch, places = unpacked_batch(ref, name)
    logits = model(batch, training=False).numpy()
    out = np.zeros(ref[f"{name}_logits"].shape, np.float32)
    for i, (r, where) in enumerate(places):
        out[r, where] = logits[i, : where.sum()]
    return out


def test_the_reference_is_of_the_train_dirs_and_packs_as_t2t(ref):
    """Each train dir's checkpoint is the one T2T's packed logits were computed with (a dir
    made anew since needs the reference made anew), and the batch is T2T's packing: numbered
    segments, positions restarting at 0, 0 at spacing and padding, spacing 2 and 0."""
    for name in CASES:
        train_dir = REFERENCE / str(ref[f"{name}_train_dir"])
        prefix = (train_dir / "checkpoint").read_text().split('"')[1]
        digest = hashlib.sha256()
        for path in sorted(train_dir.glob(f"{prefix}.*")):
            digest.update(path.read_bytes())
        assert digest.hexdigest() == str(ref[f"{name}_sha256"]), f"{train_dir}: {REGENERATE}"
    assert ref["spacing"].tolist() == [2, 0]
    assert ref["inputs"].shape != ref["targets"].shape
    for side in ("inputs", "targets"):
        ids, seg, pos = (ref[f"{side}{k}"] for k in ("", "_segmentation", "_position"))
        assert ((ids == 0) == (seg == 0)).all() and not pos[seg == 0].any()
        for r, s in segments(ref):
            assert pos[r][seg[r] == s].tolist() == list(range((seg[r] == s).sum()))
            assert ids[r][seg[r] == s][-1] == 1  # each example ends in EOS
        assert (seg[:, -1] == 0).all()  # trailing padding in every row
    assert fed_another_example(ref)[0].sum() == 0 and fed_another_example(ref)[1].sum() == 9


def test_t2t_isolates_examples_except_after_an_unspaced_one(ref):
    """What T2T computed (no model of ours): packed and alone equal to float32 rounding in
    the isolated segments, apart by 3e-2 or more in those fed another example's EOS."""
    real = ref["targets_segmentation"] > 0
    fed = fed_another_example(ref)
    for name in CASES:
        diff = np.abs(ref[f"{name}_logits"] - ref[f"{name}_unpacked_logits"]).max(-1)
        assert diff[real & ~fed].max() < 1e-5, name
        assert diff[fed].min() > 1e-2, name


def test_the_import_is_the_case_t2t_ran(case):
    """The imported hparams are the case's: T2T's defaults use the pad remover and the
    timing signal; the others learned positions, no inputs, relative attention."""
    name, model, result = case
    hp = result.imported.hparams
    assert result.step == 300
    assert hp.use_pad_remover
    want = {
        "timing": ("timing", True, "dot_product"),
        "emb": ("emb", True, "dot_product"),
        "lm": ("timing", False, "dot_product"),
        "relative": ("none", True, "dot_product_relative"),
    }[name]
    assert (hp.pos, bool(hp.get("has_input", True)), hp.self_attention_type) == want
    assert model.has_input == (name != "lm")


def test_unpacked_batches_give_t2ts_logits_of_each_example(case, ref):
    """Without packing features, a padded batch of the examples gives T2T's logits of each
    example run alone (a batch of one): no change for batches that are not packed."""
    name, model, _ = case
    want = ref[f"{name}_unpacked_logits"]
    real = ref["targets_segmentation"] > 0
    got = our_unpacked_logits(model, ref, name)
    np.testing.assert_allclose(got[real], want[real], atol=tolerance(model, ref, want), rtol=0)


def test_packed_logits_equal_t2t(case, ref):
    """Our model on T2T's packed features gives T2T's packed logits [B, Lt, V], the segments
    fed another example's EOS included (T2T's shift right of the whole row)."""
    name, model, _ = case
    want = ref[f"{name}_logits"]
    got = model(packed_features(ref, name), training=False).numpy()
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, atol=tolerance(model, ref, want), rtol=0)


def test_packing_isolates_examples_where_t2ts_does(case, ref):
    """Our packed logits equal our logits of each example alone where T2T's do (the isolated
    segments), and differ where T2T's differ (after an unspaced example)."""
    name, model, _ = case
    real = ref["targets_segmentation"] > 0
    fed = fed_another_example(ref)
    packed = model(packed_features(ref, name), training=False).numpy()
    alone = our_unpacked_logits(model, ref, name)
    atol = tolerance(model, ref, ref[f"{name}_logits"])
    keep = real & ~fed
    np.testing.assert_allclose(packed[keep], alone[keep], atol=atol, rtol=0)
    assert (np.abs(packed - alone).max(-1)[fed] > atol).all()


@pytest.mark.parametrize("precision", ["mixed_float16", "mixed_bfloat16"])
def test_a_row_whose_inputs_fill_it_is_finite_in_reduced_precision(precision):
    """A target position of segment 0 (padding) in a row whose inputs have no segment 0 has no
    key to attend to (what pack_dataset's full rows give): its -1e9 biases became -inf in
    float16 and the row NaN; T2T's float16 bias is finite (large_compatible_negative)."""
    import keras

    from tests.model_utils import build_model

    previous = keras.mixed_precision.global_policy()
    keras.mixed_precision.set_global_policy(precision)
    try:
        model = build_model("transformer_tiny", "hidden_size=16,filter_size=24,num_heads=2")
        batch = {
            "inputs": [[5, 6, 1, 7, 8, 9, 1]],
            "inputs_segmentation": [[1, 1, 1, 2, 2, 2, 2]],
            "inputs_position": [[0, 1, 2, 0, 1, 2, 3]],
            "targets": [[3, 1, 4, 4, 1, 0]],
            "targets_segmentation": [[1, 1, 2, 2, 2, 0]],
            "targets_position": [[0, 1, 0, 1, 2, 0]],
        }
        batch = {k: np.array(v, np.int32) for k, v in batch.items()}
        for training in (False, True):
            assert np.isfinite(model(batch, training=training).numpy()).all(), training
    finally:
        keras.mixed_precision.set_global_policy(previous)
