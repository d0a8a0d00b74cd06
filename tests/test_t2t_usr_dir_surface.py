"""T2T's registry rules in a usr_dir (#46): T2T's own ``Text2textTmpdir`` and
``Text2textTmpdirTokens``, a user's ``text_encoder.TextEncoder`` subclass through datagen,
trainer and decoder, and a ``TranslateProblem`` reading a ``.zip`` (a pair and a tsv in it)
and ``.gz`` files as T2T's ``compile_data`` reads them. tests/data/t2t_usr_dir_surface is
written only against T2T's API; the reference is T2T 1.15.7's own datagen of it
(tools/t2t_reference/make_t2t_usr_dir_reference.py)."""

import json
import shutil
from pathlib import Path

import pytest

from t2t_repro import registry
from t2t_repro.commands import datagen, decoder, trainer
from tests.tools import NO_DROPOUT, NO_ENCODER_LAYER, SMALL_BATCH_SHUFFLE
from tests.usr_dir_registry import restored_registry

HERE = Path(__file__).resolve().parent
USR_DIR = HERE / "data" / "t2t_usr_dir_surface"
REFERENCE = HERE / "data" / "t2t_usr_dir_surface_reference"
SUMMARY = json.loads((REFERENCE / "t2t_1.15.7_datagen.json").read_text())
OWN = "tiny_own_text_encoder"


@pytest.fixture(scope="module", autouse=True)
def restore_registry():
    """The usr_dir's names are registered for this module only."""
    yield from restored_registry({"t2t_usr_dir_surface"})


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    """t2t-datagen of the usr_dir's four problems (run twice: the second keeps every file)."""
    root = tmp_path_factory.mktemp("surface")
    shutil.copytree(REFERENCE / "tmp", root / "tmp")
    argv = [
        f"--problem={','.join(SUMMARY['problems'])}",
        f"--data_dir={root / 'data'}",
        f"--tmp_dir={root / 'tmp'}",
        f"--t2t_usr_dir={USR_DIR}",
        "--noprogress",
    ]
    assert datagen.main(argv) == 0
    first = _files(root / "data")
    assert datagen.main(argv) == 0
    assert _files(root / "data") == first
    return root, first


@pytest.mark.slow
def test_datagen_writes_byte_for_byte_what_t2t_1_15_7_writes(generated):
    root, written = generated
    manifests = {f"{name}.datagen.json" for name in SUMMARY["problems"]}
    assert set(written) - set(SUMMARY["files"]) == manifests  # the project's own, beside T2T's
    assert (
        sorted(set(written) - manifests) == SUMMARY["files"] == sorted(_files(REFERENCE / "data"))
    )
    for name in SUMMARY["files"]:  # vocab files (subwords, tokens), then every shard
        assert written[name] == (REFERENCE / "data" / name).read_bytes(), name
    # --tmp_dir as T2T left it: the zip extracted, the .gz files gunzipped beside them.
    assert sorted(_files(root / "tmp")) == SUMMARY["tmp_files_after_datagen"]


@pytest.mark.slow
def test_t2ts_own_tmpdir_problems_are_registered_under_t2ts_names(generated):
    root, _ = generated
    for name, base in (
        ("text2text_tmpdir", "Text2textTmpdir"),
        ("text2text_tmpdir_tokens", "Text2textTmpdirTokens"),
    ):
        assert type(registry.problem(name)).__name__ == base
    tokens = registry.problem("tiny_tmpdir_tokens").get_encoders(str(root / "data"))["inputs"]
    assert tokens.decode(tokens.encode("a cat sees the dog.")).startswith("<UNK> cat")


@pytest.mark.slow
@pytest.mark.usefixtures("without_grappler_here")  # plumbing: tests/grappler.py
def test_a_users_text_encoder_runs_through_trainer_and_decoder(generated, tmp_path):
    """The usr_dir's WordListEncoder (a TextEncoder subclass) gives the vocabulary sizes, the
    shards' ids (above), and the decoder's text."""
    root, _ = generated
    common = [
        f"--problem={OWN}",
        f"--data_dir={root / 'data'}",
        f"--output_dir={tmp_path / 'train'}",
        f"--t2t_usr_dir={USR_DIR}",
    ]
    rc = trainer.main(
        [
            *common,
            "--hparams_set=transformer_tiny_surface",
            f"--hparams={SMALL_BATCH_SHUFFLE},{NO_DROPOUT},{NO_ENCODER_LAYER}",
            "--train_steps=2",
            "--schedule=train",
            "--random_seed=1",
        ]
    )
    assert rc == 0
    encoder = registry.problem(OWN).get_encoders(str(root / "data"))["targets"]
    assert type(encoder).__name__ == "WordListEncoder"
    saved = json.loads((tmp_path / "train" / "hparams.json").read_text())
    assert saved["input_vocab_size"] == saved["target_vocab_size"] == encoder.vocab_size == 41
    src, out = tmp_path / "src.txt", tmp_path / "out.txt"
    src.write_text("the cat sees a dog.\n", encoding="utf-8")
    argv = [*common, f"--decode_from_file={src}", f"--decode_to_file={out}"]
    assert decoder.main([*argv, "--decode_hparams=beam_size=1,extra_length=3"]) == 0
    decoded = out.read_text(encoding="utf-8").split("\n")[0].split()
    assert decoded and set(decoded) <= set(encoder.WORDS)  # the user's decode_list's words
