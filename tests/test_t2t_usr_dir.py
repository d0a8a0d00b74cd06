"""A tensor2tensor 1.15 --t2t_usr_dir runs unchanged (#34): tests/data/t2t_usr_dir is written
only against T2T's API; t2t-datagen writes what T2T 1.15.7 writes from it (the reference in
tests/data/t2t_usr_dir_reference was made by T2T itself:
tools/t2t_reference/make_t2t_usr_dir_reference.py), and t2t-trainer and t2t-decoder run it."""

import collections
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from t2t_repro import registry
from t2t_repro.commands import datagen, decoder, trainer
from tests.tools import SMALL_BATCH_SHUFFLE
from tests.usr_dir_registry import restored_registry

HERE = Path(__file__).resolve().parent
USR_DIR = HERE / "data" / "t2t_usr_dir"
REFERENCE = HERE / "data" / "t2t_usr_dir_reference"
SUBWORDS, CHARS, TRANSLATE = "tiny_en_de_subwords", "tiny_upcase_chars", "tiny_translate_en_de"


@pytest.fixture(scope="module", autouse=True)
def restore_registry():
    """The usr_dirs' names are registered for this module only: later tests see the registry
    (and sys.modules) as they were."""
    yield from restored_registry(
        {"t2t_usr_dir", "refused_usr_dir", "other_usr_dir", "token_usr_dir"}
    )


# The training run checks the usr_dir's hparams and decodes.
# Without Grappler: tests/grappler.py.
pytestmark = pytest.mark.usefixtures("without_grappler")


def read_examples(path):
    import tensorflow as tf

    out = []
    for record in tf.data.TFRecordDataset(str(path)).as_numpy_iterator():
        feature = tf.train.Example.FromString(record).features.feature
        out.append(tuple(tuple(feature[k].int64_list.value) for k in ("inputs", "targets")))
    return out


def datagen_argv(root):
    return [
        f"--problem={SUBWORDS},{CHARS},{TRANSLATE}",
        f"--data_dir={root / 'data'}",
        f"--tmp_dir={root / 'tmp'}",
        f"--t2t_usr_dir={USR_DIR}",
        "--noprogress",
    ]


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    """t2t-datagen of both problems of the usr_dir (run twice: the second keeps the shards)."""
    root = tmp_path_factory.mktemp("usr_dir")
    shutil.copytree(REFERENCE / "tmp", root / "tmp")
    (root / "data").mkdir()
    argv = datagen_argv(root)
    assert datagen.main(argv) == 0
    snapshot = {p.name: p.read_bytes() for p in (root / "data").iterdir()}
    assert datagen.main(argv) == 0
    return root, snapshot


@pytest.mark.slow
def test_datagen_writes_byte_for_byte_what_t2t_1_15_7_writes(generated):
    root, first_run = generated
    expected = sorted(p.name for p in (REFERENCE / "data").iterdir())
    manifests = {f"{name}.datagen.json" for name in (SUBWORDS, CHARS, TRANSLATE)}
    assert set(first_run) - set(expected) == manifests  # the project's own: what made the shards
    assert sorted(set(first_run) - manifests) == expected
    assert json.loads((REFERENCE / "t2t_1.15.7_datagen.json").read_text())["files"] == expected
    for name in expected:  # vocab file, then every shard: same ids, same order, same bytes
        assert first_run[name] == (REFERENCE / "data" / name).read_bytes(), name
    # The rerun kept every file as it was.
    assert {p.name: p.read_bytes() for p in (root / "data").iterdir()} == first_run


@pytest.mark.slow
def test_a_rerun_writes_only_the_lost_shards_and_they_are_t2ts(generated, capsys):
    """Lost shards are written again, the others kept; the kept shards' shuffles are replayed,
    so a lost shard after them (a dev shard after train shards, a train shard of a split
    dealt from one stream) gets T2T's bytes."""
    root, first_run = generated
    lost = [
        f"{CHARS}-train-00001-of-00002",  # one split's own stream (is_generate_per_split)
        f"{SUBWORDS}-dev-00000-of-00001",  # one stream over train and dev
    ]
    mtimes = {p.name: p.stat().st_mtime_ns for p in (root / "data").iterdir()}
    for name in lost:
        (root / "data" / name).unlink()
    capsys.readouterr()
    assert datagen.main(datagen_argv(root)) == 0
    assert capsys.readouterr().out.count("shards:         1 written, 3 kept") == 2
    assert {p.name: p.read_bytes() for p in (root / "data").iterdir()} == first_run
    for path in (root / "data").iterdir():
        if path.name not in lost and not path.name.endswith(".datagen.json"):
            assert path.stat().st_mtime_ns == mtimes[path.name], path.name


@pytest.mark.slow
def test_the_encoding_pool_writes_t2ts_bytes(generated, tmp_path, monkeypatch):
    """T2T's generate_encoded_samples of a subword problem runs in datagen's encoding pool
    (forked workers, here on chunks of 3 pairs) and still writes T2T's shards."""
    from t2t_repro.data import datagen_lib

    root, _ = generated
    encode, pools = datagen_lib.encode_examples, []

    def small_chunks(items, vocab_path, num_workers=None, **_):
        pools.append(num_workers)
        return encode(items, vocab_path, num_workers, chunk_size=3, min_pool_items=0)

    monkeypatch.setattr(datagen_lib, "encode_examples", small_chunks)
    argv = [f"--problem={TRANSLATE}", f"--data_dir={tmp_path}", f"--tmp_dir={root / 'tmp'}"]
    assert datagen.main([*argv, f"--t2t_usr_dir={USR_DIR}", "--noprogress", "--num_workers=2"]) == 0
    assert pools == [2, 2]  # train, then dev
    written = sorted(p.name for p in tmp_path.iterdir() if not p.name.endswith(".json"))
    assert written == sorted(p.name for p in (REFERENCE / "data").glob(f"*{TRANSLATE}*"))
    for name in written:
        assert (tmp_path / name).read_bytes() == (REFERENCE / "data" / name).read_bytes(), name


@pytest.mark.slow
def test_splits_are_t2ts_and_decode_split_reads_them(generated):
    """One corpus dealt over train and dev shards (is_generate_per_split=False), and a file a
    split: source_lines gives each split's texts, as datagen split them."""
    root, _ = generated
    data, tmp = str(root / "data"), str(root / "tmp")
    problems = ((SUBWORDS, ("train", "dev")), (CHARS, ("train", "dev", "test")))
    for name, splits in problems + ((TRANSLATE, ("train", "dev")),):
        problem = registry.problem(name)
        encoder = problem.get_encoders(data)["inputs"]
        for split in splits:
            sources, targets = problem.source_lines(tmp, split)
            encoded = [
                (tuple(encoder.encode(s) + [1]), tuple(encoder.encode(t) + [1]))
                for s, t in zip(sources, targets, strict=True)
            ]
            shards = sorted((root / "data").glob(f"{name}-{split}-*"))
            written = [e for shard in shards for e in read_examples(shard)]
            assert collections.Counter(encoded) == collections.Counter(written), (name, split)
    chars = registry.problem(CHARS).problem_hparams(data)
    assert chars["input_vocab_size"] == chars["target_vocab_size"] == 258  # bytes, <pad>, <EOS>
    assert sorted((root / "tmp").glob("*compiled*")) == [  # TranslateProblem's compile_data
        root / "tmp" / f"{TRANSLATE}-compiled-{tag}.{lang}"
        for tag in ("dev", "train")
        for lang in ("lang1", "lang2")
    ]


@pytest.mark.slow
def test_trainer_and_decoder_run_the_character_problem(generated, tmp_path):
    root, _ = generated
    common = [
        f"--problem={CHARS}",
        f"--data_dir={root / 'data'}",
        f"--output_dir={tmp_path / 'train'}",
        f"--t2t_usr_dir={USR_DIR}",
    ]
    rc = trainer.main(
        [
            *common,
            "--hparams_set=transformer_tiny_usr",
            f"--hparams={SMALL_BATCH_SHUFFLE}",
            "--train_steps=3",
            "--random_seed=1",
            # T2T's default schedule evaluates at the end, heat maps of this byte-level
            # problem included; no figure of it is read here: one dev batch, not 100.
            "--eval_steps=1",
        ]
    )
    assert rc == 0
    saved = json.loads((tmp_path / "train" / "hparams.json").read_text())
    assert saved["hidden_size"] == 16 and saved["num_heads"] == 2
    assert saved["usr_dir_note"] == "tiny" and saved["optimizer_adam_beta2"] == 0.997
    assert saved["input_vocab_size"] == saved["target_vocab_size"] == 258
    src = tmp_path / "src.txt"
    src.write_text("the cat sees a dog.\nmy book\n", encoding="utf-8")
    out = tmp_path / "out.txt"
    decode_flags = "--decode_hparams=beam_size=2,extra_length=4"
    assert (
        decoder.main(
            [*common, f"--decode_from_file={src}", f"--decode_to_file={out}", decode_flags]
        )
        == 0
    )
    # Bytes, not text: a byte model may decode a "\r", which reading as text makes a newline.
    lines = out.read_bytes().split(b"\n")
    assert len(lines) == 3 and lines[2] == b""

    # The decoded text is the byte encoder's text of the searched ids.
    from t2t_repro.decoding.runner import load_decoder
    from t2t_repro.text_encoding.byte_encoder import ByteTextEncoder

    setup = load_decoder(
        CHARS,
        "",
        "",
        str(root / "data"),
        str(tmp_path / "train"),
        decode_overrides="beam_size=2,extra_length=4",
    )
    hyps = [h[0] for h in setup.decoder.decode_lines(src.read_text().splitlines())]
    # One record a line: a newline inside one is written as a space (runner.write_lines_atomically).
    assert [h.text.replace("\n", " ").encode("utf-8") for h in hyps] == lines[:2]
    assert all(h.ids and h.text == ByteTextEncoder().decode(h.ids) for h in hyps)


def test_t2t_transformer_base_is_the_command_lines():
    from t2t_repro.t2t_compat import aliases, transformer
    from t2t_repro.t2t_compat import registry as t2t_registry

    assert aliases.install()
    for name in ("transformer_base", "transformer_big", "transformer_big_enfr", "transformer_tiny"):
        assert getattr(transformer, name)() == registry.hparams(name), name
    assert transformer.transformer_base() == registry.hparams("transformer_base_v3")
    assert transformer.transformer_base_v1() != transformer.transformer_base()  # the paper's
    # T2T's registry.hparams(name) is the HParams (T2T utils/registry.py), not the function.
    assert t2t_registry.hparams("transformer_base") == registry.hparams("transformer_base_v3")
    from t2t_repro.usr_dir import import_usr_dir

    import_usr_dir(str(USR_DIR))
    usr = registry.hparams("transformer_tiny_usr")
    assert set(usr.diff(registry.hparams("transformer_base_v3"))) == {
        "num_hidden_layers",
        "hidden_size",
        "filter_size",
        "num_heads",
        "batch_size",
        "learning_rate_warmup_steps",
        "usr_dir_note",
    }
    usr.override_from_dict({"hidden_size": 32, "dropout": 0.3})  # T2T's HParams methods
    usr.del_hparam("usr_dir_note")
    assert usr.hidden_size == 32 and usr.dropout == 0.3 and "usr_dir_note" not in usr


def test_byte_and_token_encoders_are_t2ts():
    from t2t_repro.t2t_compat import text_encoder

    ref = json.loads((REFERENCE / "t2t_1.15.7_datagen.json").read_text())["encoders"]
    byte = text_encoder.ByteTextEncoder()
    ids = byte.encode(ref["byte_text"])
    assert ids == ref["byte_ids"] and byte.vocab_size == ref["byte_vocab_size"]
    assert byte.decode([0, 1, *ids, 1]) == ref["byte_decoded_with_reserved"]
    assert byte.decode([*ids, 1, 0], strip_extraneous=True) == ref["byte_decoded_stripped"]
    token = text_encoder.TokenTextEncoder(None, vocab_list=ref["token_vocab"], replace_oov="<UNK>")
    reverse = text_encoder.TokenTextEncoder(
        None, vocab_list=ref["token_vocab"], reverse=True, replace_oov="<UNK>"
    )
    assert token.encode(" the dog sees the cat ") == ref["token_ids"]
    assert reverse.encode("the dog sees") == ref["token_reverse_ids"]
    assert token.decode([3, 4, 9, 1]) == ref["token_decoded"]
    assert token.decode([3, 4, 1, 0], strip_extraneous=True) == ref["token_decoded_stripped"]
    assert token.vocab_size == ref["token_vocab_size"]


REFUSED_USR_DIR = """
from tensor2tensor.data_generators import text_problems
from tensor2tensor.utils import registry, t2t_model


@registry.register_problem
class MyLanguageModel(text_problems.Text2SelfProblem):
    def generate_samples(self, data_dir, tmp_dir, dataset_split):
        yield {"targets": "a b c"}


@registry.register_problem
class MySentiment(text_problems.Text2ClassProblem):
    pass


@registry.register_model
class MyLstm(t2t_model.T2TModel):
    pass
"""


def test_what_cannot_run_is_refused_in_one_line(tmp_path, capsys):
    usr = tmp_path / "refused_usr_dir"
    usr.mkdir()
    (usr / "__init__.py").write_text(REFUSED_USR_DIR)
    flags = [f"--data_dir={tmp_path}", f"--tmp_dir={tmp_path}", f"--t2t_usr_dir={usr}"]
    from t2t_repro.commands import trainer

    # A Text2ClassProblem trains (test_t2t_usr_dir_patterns.py); without its data, one line.
    train = ["--hparams_set=transformer_tiny", f"--output_dir={tmp_path / 'run'}"]
    assert trainer.main(["--problem=my_sentiment", *flags, *train]) == 1
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "vocab.my_sentiment" in err and "t2t-datagen" in err, err
    with pytest.raises(Exception, match=r"MyLstm.*only this project's own 'transformer'"):
        registry.model("my_lstm")(None)

    other = tmp_path / "other_usr_dir.py"
    other.write_text("from tensor2tensor.data_generators import wmt\n")
    assert datagen.main([f"--problem={SUBWORDS}", *flags[:2], f"--t2t_usr_dir={other}"]) == 1
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "data_generators.wmt is not a module of tensor2tensor 1.15" in err, (
        err
    )

    from t2t_repro.t2t_compat import generator_utils

    # The suite runs offline (conftest.py): T2T's downloads say which file to put where
    # (tests/test_download.py downloads from a loopback server).
    with pytest.raises(Exception, match=r"T2T_REPRO_OFFLINE is set.*--tmp_dir"):
        generator_utils.maybe_download(str(tmp_path), "corpus.tgz", "https://x.org/corpus.tgz")
    # T2T's maybe_download_from_drive: the file already in tmp_dir is returned.
    drive = "https://drive.google.com/uc?export=download&id=x"
    with pytest.raises(Exception, match=r"T2T_REPRO_OFFLINE is set.*--tmp_dir"):
        generator_utils.maybe_download_from_drive(str(tmp_path), "data.zip", drive)
    (tmp_path / "data.zip").write_bytes(b"PK")
    found = generator_utils.maybe_download_from_drive(str(tmp_path), "data.zip", drive)
    assert found == str(tmp_path / "data.zip")


def test_a_tarball_in_tmp_dir_is_extracted_as_t2t_extracts_it(tmp_path):
    """T2T's generate_lines_for_vocab (and compile_data) extract the archive a source's url
    names into tmp_dir when a named file is missing; one line when it cannot."""
    import io
    import tarfile

    from t2t_repro.errors import DataError
    from t2t_repro.t2t_compat import generator_utils

    text = b"eins zwei\ndrei\n"
    with tarfile.open(tmp_path / "corpus.tgz", "w:gz") as tar:
        info = tarfile.TarInfo("corpus/a.txt")
        info.size = len(text)
        tar.addfile(info, io.BytesIO(text))
    sources = [["https://x.org/corpus.tgz", ["corpus/a.txt"]]]
    lines = list(generator_utils.generate_lines_for_vocab(str(tmp_path), sources))
    assert lines == ["eins zwei", "drei"]
    assert (tmp_path / "corpus" / "a.txt").read_bytes() == text
    missing = [["https://x.org/corpus.tgz", ["corpus/b.txt"]]]
    with pytest.raises(DataError, match=r"b.txt is missing and the archive for .* does not hold"):
        list(generator_utils.generate_lines_for_vocab(str(tmp_path), missing))
    (tmp_path / "bad.tgz").write_bytes(b"not a tar file")
    with pytest.raises(DataError, match=r"bad.tgz: not a readable tar archive"):
        list(generator_utils.generate_lines_for_vocab(str(tmp_path), [["u/bad.tgz", ["c.txt"]]]))


def test_a_real_tensor2tensor_is_not_shadowed(tmp_path):
    fake = tmp_path / "tensor2tensor"
    fake.mkdir()
    (fake / "__init__.py").write_text("REAL = True\n")
    code = (
        f"import sys; sys.path.insert(0, {str(tmp_path)!r})\n"
        "from t2t_repro.t2t_compat import aliases\n"
        "print(aliases.install())\n"
        "import tensor2tensor; print(tensor2tensor.REAL)\n"
    )
    env = dict(os.environ, PYTHONPATH=str(HERE.parent))
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300
    )
    assert out.stdout.split() == ["False", "True"], out.stderr[-2000:]


TOKEN_USR_DIR = """
from tensor2tensor.data_generators import problem, text_problems
from tensor2tensor.utils import registry


@registry.register_problem
class TinyTokens(text_problems.Text2TextProblem):
    @property
    def vocab_type(self):
        return text_problems.VocabType.TOKEN

    @property
    def oov_token(self):
        return "<UNK>"

    @property
    def is_generate_per_split(self):
        return False

    @property
    def dataset_splits(self):
        return [
            {"split": problem.DatasetSplit.TRAIN, "shards": 1},
            {"split": problem.DatasetSplit.EVAL, "shards": 1},
        ]

    def generate_samples(self, data_dir, tmp_dir, dataset_split):
        yield {"inputs": "the cat", "targets": "die katze"}
        yield {"inputs": "the dog", "targets": "der hund"}
        yield {"inputs": "a cat", "targets": "eine katze"}

    def hparams(self, defaults, model_hparams):
        super().hparams(defaults, model_hparams)
        defaults.target_space_id = problem.SpaceID.DE_TOK
"""


def test_token_vocabulary_and_the_problems_target_space(tmp_path, capsys):
    usr = tmp_path / "token_usr_dir.py"
    usr.write_text(TOKEN_USR_DIR)
    data = tmp_path / "data"
    data.mkdir()
    argv = ["--problem=tiny_tokens", f"--data_dir={data}", f"--t2t_usr_dir={usr}", "--noprogress"]
    assert datagen.main(argv) == 1  # the user's vocabulary file is missing
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "vocab.tiny_tokens.tokens not found" in err, err
    (data / "vocab.tiny_tokens.tokens").write_text("<pad>\n<EOS>\n<UNK>\nthe\ncat\ndie\nkatze\n")
    assert datagen.main(argv) == 0
    # Round-robin over [train, dev]: samples 0 and 2 train, sample 1 dev; OOV words -> <UNK>.
    train = read_examples(data / "tiny_tokens-train-00000-of-00001")
    assert sorted(train) == [((2, 4, 1), (2, 6, 1)), ((3, 4, 1), (5, 6, 1))]
    assert read_examples(data / "tiny_tokens-dev-00000-of-00001") == [((3, 2, 1), (2, 2, 1))]
    found = registry.problem("tiny_tokens").problem_hparams(str(data))
    assert found["target_space_id"] == 8  # SpaceID.DE_TOK, set by the problem's hparams()
    assert found["input_vocab_size"] == found["target_vocab_size"] == 7
