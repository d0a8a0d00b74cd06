"""Bad values are refused before any work, in one line, and a refused run writes nothing."""

import subprocess

import pytest

from t2t_repro import registry
from t2t_repro.decoding.line_decoder import decode_hparams
from t2t_repro.decoding.runner import check_decode_paths
from t2t_repro.hparam import HParamsError
from t2t_repro.hparams_lib.checks import validate
from t2t_repro.paths import expect_directory
from tests.model_utils import shared_toy_data
from tests.tools import ROOT, tool_cmd


@pytest.mark.parametrize(
    "overrides,message",
    [
        ("num_heads=3", "num_heads=3 does not divide hidden_size=128"),
        ("hidden_size=0", "hidden_size=0 must be positive"),
        ("layer_prepostprocess_dropout=1.0", r"must be in \[0, 1\)"),
        ("attention_dropout=-0.1", r"must be in \[0, 1\)"),
        ("batch_size=0", "batch_size=0 must be positive"),
        ("num_hidden_layers=-1", "num_hidden_layers=-1 must be >= 0"),
        ("num_decoder_layers=-2", "num_decoder_layers=-2 must be >= 0"),
        ("learning_rate_schedule=constant*warmup_bogus", "Unknown learning-rate factor"),
        ("optimizer=yellow_fin", "YellowFin .* is not implemented here"),
        ("optimizer=bogus", "'bogus' is not a T2T optimizer"),
    ],
)
def test_model_hparams_are_validated(overrides, message):
    hp = registry.hparams("transformer_quickstart").parse(overrides)
    with pytest.raises(HParamsError, match=message):
        validate(hp)


def test_good_hparams_pass():
    for name in (
        "transformer_base_v1",
        "transformer_big_v1",
        "transformer_base",
        "transformer_big",
        "transformer_quickstart",
    ):
        validate(registry.hparams(name))


def test_zero_layers_are_t2ts_and_only_a_decoder_without_one_is_refused_for_training():
    """T2T builds a model of 0 layers (num_encoder_layers or num_hidden_layers, the same for
    the decoder); training refuses only an encoder-decoder whose decoder has none (nothing
    reads the encoder; T2T leaves its weights untrained)."""
    zero = registry.hparams("transformer_quickstart").parse("num_hidden_layers=0")
    validate(zero)  # decoding or exporting such a model (a T2T checkpoint's)
    with pytest.raises(HParamsError, match=r"the decoder has no layer .*num_decoder_layers=1"):
        validate(zero, training=True)
    for overrides, extra in [
        ("num_hidden_layers=0,num_decoder_layers=1", {}),  # the encoder: embedding, layer norm
        ("num_hidden_layers=0", {"has_input": False}),  # a language model
        ("num_hidden_layers=0", {"class_label_target": True}),  # transformer_encoder's
    ]:
        hp = registry.hparams("transformer_quickstart").parse(overrides)
        for name, value in extra.items():
            hp.add_hparam(name, value)
        validate(hp, training=True)


@pytest.mark.parametrize("name", ["num_hidden_layers", "hidden_size"])
def test_a_saved_record_without_a_model_size_is_refused(name):
    """A layer count of 0 is allowed, but not a record that lacks one (``REQUIRED``)."""
    from t2t_repro.hparams_lib.build import add_problem_hparams
    from t2t_repro.hparams_lib.checks import check_types

    hp = add_problem_hparams(registry.hparams("transformer_quickstart"), 30, 30)
    hp.del_hparam(name)
    with pytest.raises(HParamsError, match=f"hparams.json lacks {name}: it is not a complete"):
        check_types(hp, "hparams.json")


@pytest.mark.parametrize("overrides", ["beam_size=0", "extra_length=-1", "batch_size=-1"])
def test_decode_hparams_are_validated(overrides):
    with pytest.raises(HParamsError, match="must be at least"):
        decode_hparams(overrides)


def test_a_negative_alpha_is_t2ts_length_penalty():
    """T2T runs alpha < 0 (beam_search.py's ((5 + len) / 6) ** alpha); it was refused."""
    from t2t_repro.decoding.beam_search import length_penalty

    assert decode_hparams("alpha=-0.5").alpha == -0.5
    assert float(length_penalty(7, -0.5)) == pytest.approx(2.0**-0.5)


def test_decode_batch_size_0_is_t2ts_default_of_32():
    assert decode_hparams("batch_size=0").batch_size == 32 == decode_hparams().batch_size


def test_paths_are_checked(tmp_path):
    a_file = tmp_path / "f"
    a_file.write_text("x\n")
    with pytest.raises(NotADirectoryError, match="a directory is expected"):
        expect_directory(str(a_file), "--output_dir")
    with pytest.raises(IsADirectoryError, match="--decode_to_file"):
        check_decode_paths(str(a_file), str(tmp_path))
    with pytest.raises(FileNotFoundError, match="does not exist"):
        check_decode_paths(str(tmp_path / "nope"), str(tmp_path / "out"))


def trainer_cli():
    """t2t-trainer's main, run in this process (TensorFlow loads once)."""
    from t2t_repro.commands import trainer

    return trainer.main


BAD_FLAGS = [
    ("--train_steps=0", "--train_steps=0 must be at least 1"),
    ("--keep_checkpoint_max=-1", "--keep_checkpoint_max=-1 must be at least 0"),
    ("--keep_checkpoint_every_n_hours=0", "--keep_checkpoint_every_n_hours=0.0 must be above 0"),
    ("--log_step_count_steps=0", "--log_step_count_steps=0 must be at least 1"),
    ("--steps_per_loop=0", "--steps_per_loop=0 must be at least 1"),
    ("--local_eval_frequency=-1", "--local_eval_frequency=-1 must be at least 0"),
    (  # T2T's train_and_evaluate trains nothing without a ValidationMonitor
        "--schedule=train_and_evaluate --local_eval_frequency=0",
        "with --local_eval_frequency=0 trains nothing in T2T",
    ),
    ("--save_checkpoints_secs=-5", "--save_checkpoints_secs=-5 must be at least 0"),
    ("--worker_gpu=64", "--worker_gpu=64 but only"),
    ("--hparams=num_heads=3", "num_heads=3 does not divide"),
    ("--hparams=batch_size=0", "batch_size=0 must be positive"),
    ("--hparams=num_hidden_layers=0", "the decoder has no layer"),
    ("--hparams=relu_dropout=1.5", "relu_dropout=1.5 must be in"),
    ("--hparams=learning_rate_schedule=bogus", "Unknown learning-rate factor 'bogus'"),
]


def test_trainer_refuses_bad_values_in_one_line_and_writes_nothing(tmp_path, capsys):
    data = shared_toy_data()  # read only (tests/model_utils.py)
    run = trainer_cli()
    common = [
        "--problem=translate_toy",
        "--hparams_set=transformer_quickstart",
        f"--data_dir={data}",
    ]
    # An existing run's record must survive every refused run untouched.
    out = tmp_path / "run"
    out.mkdir()
    hp = registry.hparams("transformer_quickstart").parse("num_heads=2")
    from t2t_repro.hparams_lib.build import add_problem_hparams
    from t2t_repro.training.output_dir import write_record

    sizes = registry.problem("translate_toy").vocab_sizes(str(data))
    add_problem_hparams(hp, *sizes)
    hp.add_hparam("train_steps", 250000)
    write_record(str(out), hp, {"note": "the first run"})
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    for flag, message in BAD_FLAGS:
        overrides = (
            [flag] if flag.startswith("--hparams") else ["--hparams=num_heads=2", *flag.split()]
        )
        assert run(common + [f"--output_dir={out}"] + overrides) == 1, flag
        err = capsys.readouterr().err
        assert err.startswith("t2t-trainer: error: ") and message in err, (flag, err)
        assert err.count("\n") == 1 or "other hparams:" in err, err  # that one lists them
        assert {p.name: p.read_bytes() for p in out.iterdir()} == before, flag
        if not flag.endswith("num_heads=4"):  # (valid in a new dir)
            # A new output dir is not even created.
            assert run(common + [f"--output_dir={tmp_path / 'new'}"] + overrides) == 1
            capsys.readouterr()
            assert not (tmp_path / "new").exists(), flag
    a_file = tmp_path / "file"
    a_file.write_text("")
    assert run(common + [f"--output_dir={a_file}"]) == 1
    assert "a directory is expected" in capsys.readouterr().err


@pytest.mark.slow
def test_cli_one_liners_for_decoder_and_datagen(tmp_path):
    """A few bad inputs through the real executables (subprocesses, as users run them)."""
    from tests.model_utils import toy_checkpoint_dir

    root = toy_checkpoint_dir(tmp_path, step=3)
    vocab = next((root / "data").glob("vocab.*"))
    vocab.write_text(vocab.read_text()[:50])  # truncated mid-line
    src = tmp_path / "src.txt"
    src.write_text("a cat .\n")
    common = [
        *tool_cmd("t2t-decoder"),
        "--problem=translate_toy",
        f"--data_dir={root / 'data'}",
        f"--output_dir={root / 'train'}",
        f"--decode_from_file={src}",
    ]
    for extra, message in (
        (["--decode_hparams=beam_size=0"], "beam_size=0 must be at least 1"),
        ([], "unbalanced quotes"),
    ):
        out = subprocess.run(common + extra, capture_output=True, text=True, timeout=300, cwd=ROOT)
        assert out.returncode == 1 and message in out.stderr, out.stderr[-2000:]
        assert "Traceback" not in out.stderr and out.stderr.count("t2t-decoder: error") == 1
    out = subprocess.run(
        [*tool_cmd("t2t-datagen"), "--problem=translate_toy", f"--data_dir={src}"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert out.returncode == 1 and "a directory is expected" in out.stderr, out.stderr[-2000:]
    assert "Traceback" not in out.stderr


def test_an_input_is_cut_only_where_t2t_cuts_it():
    """T2T's decode_from_file cuts a line only to max_input_size, its dataset decodes never;
    nothing else bounds an input (past a learned position table T2T adds no signal:
    tests/test_learned_positions.py)."""
    from t2t_repro.decoding.line_decoder import UNLIMITED, input_limit

    asked, default = decode_hparams("max_input_size=20,extra_length=10"), decode_hparams()
    assert input_limit(default) == UNLIMITED
    assert input_limit(asked) == 20
    assert input_limit(asked, split=True) == UNLIMITED
