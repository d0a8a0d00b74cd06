"""T2T's names mean T2T 1.15's things (#47): the registered sets T2T 1.15 also registers have
its values, every name of its transformer sets is accepted through one table
(t2t_repro/t2t_hparams.py) or refused in one line, the paper's sets keep their numbers under
their own names, and a run saved when the plain names were the paper's still resumes.

The reference is T2T 1.15.7's own ``HParams.values()``
(tools/t2t_reference/make_t2t_hparams_reference.py)."""

import json
from pathlib import Path

import pytest

from t2t_repro import registry
from t2t_repro.hparam import HParams, HParamsError
from t2t_repro.hparams_lib.build import create_hparams
from t2t_repro.t2t_hparams import IGNORED, NEUTRAL, T2T_VALUES, is_t2t_only
from tests.tools import TINY_TRAINING
from tests.usr_dir_registry import restored_registry

REFERENCE = json.loads(
    (Path(__file__).parent / "data" / "t2t_reference" / "t2t_1.15.7_hparams.json").read_text()
)
# Not T2T: hparams of this project's own features, each off at its value in every T2T set.
PROJECT_ONLY = {
    "padded_bucket_step": 0.0,
    "word_dropout_alpha": 0.0,
    "target_space_vocab_size": 32,  # T2T's fixed 32 rows of the target-space embedding
    "slot_signal": False,
    "slot_source_feed": False,
}


# The runs check that T2T's names are accepted and train.
# Without Grappler: tests/grappler.py.
pytestmark = pytest.mark.usefixtures("without_grappler")


def t2t_sets_registered_here():
    names = [n for n in REFERENCE["sets"] if n in registry.list_names(registry.HPARAMS)]
    assert "transformer_base" in names and "transformer_big_enfr" in names
    return names


def assert_is_t2ts(ours: HParams, t2t: dict, name: str) -> None:
    for key, value in t2t.items():
        if key in ours:
            expected = value if value is not None else T2T_VALUES.get((key, None), value)
            assert ours.get(key) == expected, (name, key, ours.get(key), value)
        elif key in NEUTRAL:
            assert value == NEUTRAL[key], (name, key)  # T2T's set leaves the feature off
        elif key in IGNORED:  # no effect here, read back as T2T's
            assert getattr(ours, key) == value, (name, key, getattr(ours, key), value)
        else:  # honoured, kept beside the hparams (not in hparams.json): T2T's value unset
            assert is_t2t_only(key) and getattr(ours, key) == value, (name, key)
    extra = {k: ours.get(k) for k in ours if k not in t2t}
    if name != "basic_1":  # T2T's basic_1 has fewer names than the transformer sets
        assert extra == PROJECT_ONLY, name


def test_t2t_set_names_give_t2t_1_15_values():
    for name in t2t_sets_registered_here():
        assert_is_t2ts(registry.hparams(name), REFERENCE["sets"][name], name)


def test_paper_sets_are_t2t_v1_at_the_papers_sizes():
    v1 = REFERENCE["sets"]["transformer_base_v1"]
    big = dict(v1, hidden_size=1024, filter_size=4096, num_heads=16)
    for name, t2t in (
        ("transformer_base_v1", v1),
        ("transformer_big_v1", dict(big, layer_prepostprocess_dropout=0.3)),
        ("transformer_big_enfr_v1", dict(big, layer_prepostprocess_dropout=0.1)),
    ):
        assert_is_t2ts(registry.hparams(name), t2t, name)
    # the names these had here before #47 are T2T 1.15's sets now
    assert registry.hparams("transformer_big_v3") == registry.hparams("transformer_big")


def test_former_meanings_are_the_sets_values_before_47():
    from t2t_repro.hparams_lib.renamed import FORMER_MEANINGS, former_hparams

    for name, paper in (
        ("transformer_base", "transformer_base_v1"),
        ("transformer_big", "transformer_big_v1"),
        ("transformer_big_enfr", "transformer_big_enfr_v1"),
    ):
        assert former_hparams(name) == registry.hparams(paper), name
    parsing = former_hparams("transformer_parsing_big", "batch_size=64")
    assert parsing.diff(registry.hparams("transformer_parsing_big")) == {
        "shared_embedding_and_softmax_weights": (False, True),
        "batch_size": (64, 2048),
    }
    tied = former_hparams("transformer_parsing_big", "shared_embedding_and_softmax_weights=true")
    assert tied == registry.hparams("transformer_parsing_big")  # the user's value wins
    assert former_hparams("transformer_tiny") is None and len(FORMER_MEANINGS) == 4


def test_every_name_of_t2ts_transformer_sets_is_in_the_table_or_stored():
    names = set(REFERENCE["sets"]["transformer_base"]) | set(REFERENCE["added_names"])
    ours = registry.hparams("transformer_base")
    assert len(names) >= 153 + 21
    assert not [n for n in names if n not in ours and not is_t2t_only(n)]
    assert not set(IGNORED) & set(NEUTRAL)
    assert not set(IGNORED) & set(ours) and not set(NEUTRAL) & set(ours)  # the table: unstored
    # relative attention is implemented: its two names are stored hparams
    assert ours.self_attention_type == "dot_product" and ours.max_relative_position == 0


def test_hparams_overrides_take_t2ts_names():
    hp = create_hparams(
        "transformer_base",
        "symbol_modality_num_shards=1,moe_k=4,self_attention_type=dot_product,"
        "max_relative_position=0,dropout=0.0",
        input_vocab_size=10,
    )
    assert hp.symbol_modality_num_shards == 1 and hp.moe_k == 4
    assert hp.values()["dropout"] == 0.0  # stored, as in T2T; T2T's transformer ignores it
    assert "moe_k" not in hp.values() and "moe_k" not in json.loads(hp.to_json())
    assert hp.copy().moe_k == 4 and hp.vocab_divisor == 1  # T2T's value when unset
    for override, name in (("num_area_layers=2", "num_area_layers"),):
        with pytest.raises(HParamsError, match=f"^hparam {name}=.*[(]only {name}=") as e:
            create_hparams("transformer_base", override)
        assert "\n" not in str(e.value)
    with pytest.raises(HParamsError, match="Unknown hparam 'no_such_name'"):
        create_hparams("transformer_base", "no_such_name=1")


def test_worker_gpu_is_t2ts():
    from t2t_repro.commands.trainer import build_parser
    from t2t_repro.training.cluster.devices import unused_gpus_note
    from t2t_repro.training.config import TrainerConfig

    assert TrainerConfig("p", "s", "d", "o").worker_gpu == 1
    assert build_parser().get_default("worker_gpu") == 1
    assert unused_gpus_note(1, 1) is None and unused_gpus_note(0, 0) is None
    note = unused_gpus_note(8, 1)
    assert "\n" not in note and "--worker_gpu=8 trains on all of them" in note


# -- a usr_dir's hparams function, and resuming ------------------------------------------------


@pytest.fixture(scope="module")
def data_dir():
    from tests.model_utils import shared_toy_data

    return shared_toy_data()  # read only: the runs write to their own output_dir


@pytest.fixture
def restore_registry():
    yield from restored_registry({"every_name_usr_dir"})


def tiny_flags(data_dir, output_dir, *extra):
    return [
        "--problem=translate_toy",
        f"--data_dir={data_dir}",
        f"--output_dir={output_dir}",
        "--schedule=train",
        "--random_seed=1",
        "--eval_decode_examples=0",
        "--no-attention_images",
        *extra,
    ]


@pytest.mark.slow
def test_usr_dir_setting_every_t2t_name_to_its_default_trains(data_dir, tmp_path, restore_registry):
    from t2t_repro.commands import trainer

    usr_dir = tmp_path / "every_name_usr_dir"
    usr_dir.mkdir()
    lines = [
        "from tensor2tensor.models import transformer",
        "from tensor2tensor.utils import registry",
        "",
        "",
        "@registry.register_hparams",
        "def transformer_every_t2t_name():",
        "    hparams = transformer.transformer_base()",
        *(f"    hparams.{k} = {v!r}" for k, v in REFERENCE["sets"]["transformer_base"].items()),
        "    return hparams",
    ]
    (usr_dir / "__init__.py").write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "train"
    flags = tiny_flags(data_dir, out, f"--t2t_usr_dir={usr_dir}", f"--hparams={TINY_TRAINING}")
    assert (
        trainer.main([*flags, "--hparams_set=transformer_every_t2t_name", "--train_steps=1"]) == 0
    )
    assert (out / "ckpt-1.index").exists()
    saved = json.loads((out / "hparams.json").read_text())
    assert "moe_k" not in saved and "bottom" not in saved  # T2T-only names: not stored
    assert saved["dropout"] == 0.2  # stored, as T2T stores it
    # the function's hparams are transformer_base's (with the same overrides)
    problem = registry.problem("translate_toy").problem_hparams(str(data_dir))
    expected = create_hparams("transformer_base", TINY_TRAINING, **problem).values()
    assert saved == dict(expected, train_steps=1)


@pytest.mark.slow
def test_a_run_saved_as_the_papers_transformer_base_resumes_with_its_values(
    data_dir, tmp_path, capsys
):
    from t2t_repro.commands import trainer

    out = tmp_path / "train"
    out.mkdir()
    flags = tiny_flags(data_dir, out, f"--hparams={TINY_TRAINING}")
    # the hparams.json of a run started before #47 with --hparams_set=transformer_base: the
    # paper's set (written here, as t2t-trainer wrote it, instead of training that run)
    problem = registry.problem("translate_toy").problem_hparams(str(data_dir))
    old = create_hparams("transformer_base_v1", TINY_TRAINING, **problem)
    old.add_hparam("train_steps", 1)
    saved = old.to_json() + "\n"
    (out / "hparams.json").write_text(saved)
    assert trainer.main([*flags, "--hparams_set=transformer_base", "--train_steps=1"]) == 0
    lines = capsys.readouterr().out.splitlines()
    [note] = [line for line in lines if line.startswith("note: ") and "saved hparams" in line]
    assert "--hparams_set=transformer_base_v1 gives them from now on" in note
    assert (out / "ckpt-1.index").exists() and (out / "hparams.json").read_text() == saved
    # Another set: as T2T reads hparams.json over the set, the saved values are kept, said
    assert trainer.main([*flags, "--hparams_set=transformer_big", "--train_steps=2"]) == 0
    said = capsys.readouterr().out.splitlines()
    [kept] = [line for line in said if line.startswith(f"note: {out} keeps its saved")]
    assert "layer_prepostprocess_dropout" in kept and "--hparams_set=transformer_big;" in kept
    rewritten = json.loads((out / "hparams.json").read_text())
    assert rewritten == dict(json.loads(saved), train_steps=2)  # only --train_steps changed
    # --hparams over the saved ones reaches the restore: a shape the checkpoint lacks stops
    # the run there in one line, and hparams.json is as it was
    before = (out / "hparams.json").read_text()
    wider = tiny_flags(data_dir, out, f"--hparams={TINY_TRAINING.replace('=32', '=64', 1)}")
    assert trainer.main([*wider, "--hparams_set=transformer_base", "--train_steps=3"]) == 1
    err = capsys.readouterr().err
    assert "changes a shape cannot resume it" in err and err.count("\n") == 1, err
    assert (out / "hparams.json").read_text() == before


def test_import_with_dropout_0_prints_a_resume_command_the_trainer_accepts(tmp_path, capsys):
    """T2T's transformer never reads ``dropout``: a T2T run with dropout=0.0 imports, and the
    printed set and overrides pass t2t-trainer's checks against the written hparams.json."""
    import re
    import shutil

    from t2t_repro.commands.t2t_import import main
    from t2t_repro.hparams_lib.checks import validate
    from t2t_repro.training.output_dir import saved_changes, saved_hparams
    from tests.t2t_fixtures import POSTNORM_DIR

    t2t_dir = tmp_path / "t2t"
    shutil.copytree(POSTNORM_DIR, t2t_dir)
    values = json.loads((t2t_dir / "hparams.json").read_text())
    assert values["dropout"] == 0.2
    (t2t_dir / "hparams.json").write_text(json.dumps(dict(values, dropout=0.0)))
    out = tmp_path / "out"
    assert main([f"--t2t_dir={t2t_dir}", f"--output_dir={out}"]) == 0
    [resume] = [line for line in capsys.readouterr().out.splitlines() if line.startswith("resume")]
    set_name = re.search(r"--hparams_set=(\S+)", resume)[1]
    overrides = re.search(r'--hparams="([^"]*)"', resume)[1]
    assert "dropout=0.0" in overrides.split(",")
    saved = json.loads((out / "hparams.json").read_text())
    sizes = {k: saved[k] for k in ("input_vocab_size", "target_vocab_size", "target_space_id")}
    hp = create_hparams(set_name, overrides, **sizes)  # what t2t-trainer builds from it
    validate(hp, "hparams", training=True)
    assert saved_changes(saved_hparams(str(out)), hp, set_name) == {}


def test_every_decode_hparam_of_t2t_is_read_here_or_settled_by_the_table():
    """T2T 1.15.7's decode_hparams (its names and defaults, recorded by T2T): each is stored
    here with T2T's default, or in t2t_decode_names's table with it; a table name is accepted
    at any value when it changes nothing here, else refused in one line off T2T's default in
    the decode modes that read it."""
    from t2t_repro.decoding import t2t_decode_names as names
    from t2t_repro.decoding.line_decoder import DECODE_DEFAULTS, decode_hparams
    from t2t_repro.decoding.t2t_decode_names import NOT_DONE, t2t_decode_defaults

    t2t = REFERENCE["decode_hparams"]
    ours = {**DECODE_DEFAULTS, **t2t_decode_defaults()}
    assert set(t2t) <= set(ours)
    # batch_size 0 is T2T's "32" (decode_from_file); extra_length etc. are T2T's own.
    assert {n: v for n, v in t2t.items() if ours[n] != v} == {"batch_size": 0}
    assert decode_hparams("batch_size=0").batch_size == ours["batch_size"] == 32
    accepted = decode_hparams("eos_penalty=0.5,shards=4,force_decode_length=true")
    assert "eos_penalty" not in accepted and accepted.beam_size == t2t["beam_size"]
    # where T2T 1.15.7's decoding.py reads them: decode_once, decode_from_file,
    # decode_interactively (skip_eos_postprocess was missed there), export
    assert {n: e[2] for n, e in NOT_DONE.items()} == {
        "skip_eos_postprocess": {names.SPLIT, names.FILE, names.STDIN},
        "identity_output": {names.SPLIT, names.STDIN},
        "multiproblem_task_id": {names.FILE},
        "export_extra_infer_outputs": {names.EXPORT},
    }
    for name, (default, _, modes) in NOT_DONE.items():
        other = not default if isinstance(default, bool) else "x" if default == "" else 7
        dhp = decode_hparams(f"{name}={other}")
        for mode in (names.SPLIT, names.FILE, names.STDIN, names.EXPORT):
            if mode not in modes:
                names.check_mode(dhp, mode)  # a mode that does not read it
                continue
            with pytest.raises(
                HParamsError, match=rf"{name}=.* not implemented here \(decoding a {mode}"
            ) as error:
                names.check_mode(dhp, mode)
            assert "\n" not in str(error.value)
    with pytest.raises(HParamsError, match="Unknown hparam 'no_such_name'"):
        decode_hparams("no_such_name=1")


def test_pos_none_given_as_text_is_no_positional_signal_as_in_t2t():
    """--hparams=pos=None gives T2T the string "None", for which transformer_prepare_encoder
    adds no signal: "none" here (it was refused when the model was built)."""
    assert registry.hparams("transformer_base").parse("pos=None").pos == "none"
