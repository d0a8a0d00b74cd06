"""Patterns of public T2T 1.x usr_dirs (#46), each in a usr_dir written for the test
(tests/data/t2t_usr_dir_patterns/README.md): this project's t2t-datagen writes byte for byte what
T2T 1.15.7's datagen wrote from the same usr_dir and corpus (the reference in
tests/data/t2t_usr_dir_patterns_reference, made by T2T itself:
tools/t2t_reference/make_t2t_usr_dir_patterns_reference.py), and the problem's encoders have the
vocabulary sizes T2T's feature_encoders gave."""

import json
import re
import shutil
from pathlib import Path

import pytest

from t2t_repro import registry
from t2t_repro.commands import datagen
from t2t_repro.text_encoding.reserved_tokens import PAD
from tests.usr_dir_registry import restored_registry

HERE = Path(__file__).resolve().parent
USR_DIRS = HERE / "data" / "t2t_usr_dir_patterns"
REFERENCE = HERE / "data" / "t2t_usr_dir_patterns_reference"
SUMMARY = json.loads((REFERENCE / "t2t_1.15.7_datagen.json").read_text())
CWD_RELATIVE = {"sparse_shards_usr"}  # its generate_samples opens verses/lines.txt


def one_character_a_pad(text: str) -> str:
    """A character model's decoded text with each ``<pad>`` as one character, so that its
    length never exceeds its ids': T2T's ByteTextEncoder.decode writes an id 0 before EOS as
    the 5 characters ``<pad>``, and invalid UTF-8 as U+FFFD (one per byte or fewer)."""
    return text.replace(PAD, "\0")


def test_every_reference_usr_dir_is_tested():
    assert sorted(SUMMARY["problems"]) == sorted(
        p.name for p in USR_DIRS.iterdir() if (p / "__init__.py").exists()
    )


@pytest.fixture(autouse=True)
def restore_registry():
    """Each test's registrations and usr_dir modules are its own."""
    yield from restored_registry({*SUMMARY["problems"], "two_problems_usr", "labels_usr"})


@pytest.mark.parametrize(
    "usr_dir",
    [
        "chars_name_usr",
        pytest.param("sparse_shards_usr", marks=pytest.mark.slow),  # builds a subword vocabulary
        "two_token_vocabs_usr",
        "lm_self_usr",
        "class_label_usr",
    ],
)
def test_datagen_writes_what_t2t_1_15_7_writes(usr_dir, tmp_path, monkeypatch):
    problem_name = SUMMARY["problems"][usr_dir]
    tmp, data = tmp_path / "tmp", tmp_path / "data"
    shutil.copytree(REFERENCE / "tmp" / usr_dir, tmp)
    if usr_dir in CWD_RELATIVE:
        monkeypatch.chdir(tmp)
    argv = [
        f"--problem={problem_name}",
        f"--data_dir={data}",
        f"--tmp_dir={tmp}",
        f"--t2t_usr_dir={USR_DIRS / usr_dir}",
        "--noprogress",
        "--num_workers=1",  # a few records: no pool of encoding processes
    ]
    assert datagen.main(argv) == 0
    expected = SUMMARY["files"][usr_dir]
    assert sorted(p.name for p in (REFERENCE / "data" / usr_dir).iterdir()) == expected
    written = {p.name: p.read_bytes() for p in data.iterdir()}
    # Nothing T2T wrote is missing; besides it, at most the project's own datagen manifest.
    assert set(written) - set(expected) <= {f"{problem_name}.datagen.json"}
    for name in expected:  # vocab files and every shard (empty ones too): same bytes
        assert written.get(name) == (REFERENCE / "data" / usr_dir / name).read_bytes(), name

    problem = registry.problem(problem_name)
    assert problem.name == problem_name  # the registered name, over a class attribute `name`
    encoders = problem.feature_encoders(str(data))
    sizes = {k: e.vocab_size for k, e in encoders.items()}
    if usr_dir == "class_label_usr":  # T2T's targets encoder, a ClassLabelEncoder
        labels = encoders["targets"]
        assert [labels.decode([i]) for i in range(2)] == ["negative", "positive"]
        assert labels.encode("positive") == 1 and sizes["targets"] == problem.num_classes
    assert sizes == SUMMARY["vocab_sizes"][problem_name]  # a language model's: targets only


@pytest.mark.slow  # a training run of a tiny model, an average, decodes
@pytest.mark.usefixtures("without_grappler_here")  # plumbing: tests/grappler.py
def test_a_language_model_trains_evaluates_averages_and_continues_prompts(tmp_path, capsys):
    """T2T's datagen of a Text2SelfProblem (above) trains here as T2T's decoder-only
    Transformer: evaluation reports loss and perplexity per token, t2t-avg-all averages it and
    t2t-decoder continues each line of a file (greedy, beam, sampling, with scores)."""
    from t2t_repro.commands import avg_all, decoder, trainer
    from tests.tools import TINY_PLUMBING

    data = REFERENCE / "data" / "lm_self_usr"
    flags = [
        "--problem=char_lines_lm",
        f"--data_dir={data}",
        f"--t2t_usr_dir={USR_DIRS / 'lm_self_usr'}",
        "--hparams_set=transformer_tiny",
    ]
    out = tmp_path / "run"
    # Two checkpoints to average (steps 2 and 4) from one run: one model and one trace of
    # each step function, not two.
    train = [f"--hparams={TINY_PLUMBING}", f"--output_dir={out}", "--train_steps=4"]
    every = "--local_eval_frequency=2"
    assert trainer.main([*flags, *train, every, "--schedule=train_and_evaluate"]) == 0
    log = capsys.readouterr().out
    assert "eval at step 4: loss" in log and "perplexity" in log, log
    assert {p.name for p in out.glob("ckpt-*.index")} == {"ckpt-2.index", "ckpt-4.index"}
    assert avg_all.main([f"--model_dir={out}", f"--output_dir={out / 'avg'}", "--n=2"]) == 0
    prompts = tmp_path / "prompts.txt"
    prompts.write_text("abc\nx.\n\n", encoding="utf-8")
    # T2T's num_decodes=2 reads a language model's file twice over: 6 records of 3 prompts
    for decode_hparams, hparams, records in (
        ("beam_size=1", "", 3),
        ("beam_size=2", "", 3),
        ("beam_size=1,num_decodes=2", "--hparams=sampling_method=random,sampling_temp=0.8", 6),
    ):
        result = tmp_path / "out.txt"
        args = [
            f"--output_dir={out}",
            f"--checkpoint_path={out / 'avg'}",
            f"--decode_hparams={decode_hparams},extra_length=4,return_beams=True,"
            "write_beam_scores=True",
            f"--decode_from_file={prompts}",
            f"--decode_to_file={result}",
            "--random_seed=1",
        ]
        assert decoder.main([*flags, *args, *filter(None, [hparams])]) == 0
        # Each record: each output (return_beams' beams) followed by a tab and its score
        # (T2T's "%.2f"), tab-separated, then a newline (a character model's text may hold
        # any byte): up to the batch's longest prompt (3) + 4 ids.
        *fields, rest = re.split(r"\t(-?\d+\.\d\d)([\t\n])", result.read_bytes().decode())
        outputs = list(zip(fields[::3], fields[1::3], fields[2::3], strict=True))
        assert rest == "" and [end for *_, end in outputs].count("\n") == records, fields
        assert len(outputs) <= records * (2 if "beam_size=2" in decode_hparams else 1)
        for text, score, _ in outputs:
            ids_at_least = len(one_character_a_pad(text))
            assert ids_at_least <= 3 + 4 and float(score) <= 0, (text, score)


def test_datagen_refuses_a_problem_it_cannot_write_before_writing_any(tmp_path, capsys):
    """A Text2RealProblem's records hold real values, which datagen here does not write: it
    is refused before the other problems' files are written, not halfway."""
    usr = tmp_path / "two_problems_usr.py"
    usr.write_text(
        "from tensor2tensor.data_generators import text_problems\n"
        "from tensor2tensor.utils import registry\n\n\n"
        "@registry.register_problem\n"
        "class PlainPairs(text_problems.Text2TextProblem):\n"
        "    def generate_samples(self, data_dir, tmp_dir, dataset_split):\n"
        "        yield {'inputs': 'a b', 'targets': 'c d'}\n\n\n"
        "@registry.register_problem\n"
        "class Rating(text_problems.Text2RealProblem):\n"
        "    def generate_samples(self, data_dir, tmp_dir, dataset_split):\n"
        "        yield {'inputs': 'a b', 'targets': [0.5]}\n"
    )
    data = tmp_path / "data"
    data.mkdir()
    argv = [
        "--problem=plain_pairs,rating",
        f"--data_dir={data}",
        f"--tmp_dir={tmp_path}",
        f"--t2t_usr_dir={usr}",
        "--noprogress",
    ]
    assert datagen.main(argv) == 1
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and err.endswith(
        "Rating (rating): Text2RealProblem (regression) is not supported by this project's "
        "Transformer."
    ), err
    assert list(data.iterdir()) == []


LABELS_USR_DIR = """
from tensor2tensor.data_generators import text_encoder, text_problems
from tensor2tensor.layers import modalities
from tensor2tensor.utils import registry


@registry.register_problem
class TaggedLines(text_problems.Text2TextProblem):
    # label lists as targets, with a class-label target kind not provided here
    # (ONE_HOT_CLASS_LABEL); T2T's datagen never asks for feature_encoders, whose
    # ClassLabelEncoder only the trainer would use

    @property
    def vocab_type(self):
        return text_problems.VocabType.CHARACTER

    @property
    def is_generate_per_split(self):
        return False

    @property
    def dataset_splits(self):
        return [{"split": "train", "shards": 2}, {"split": "eval", "shards": 1}]

    def generate_encoded_samples(self, data_dir, tmp_dir, dataset_split):
        encoder = self.get_or_create_vocab(data_dir, tmp_dir)
        for text, labels in (("ab", [0, 2]), ("ba", [1]), ("aa", [0])):
            yield {"inputs": encoder.encode(text) + [text_encoder.EOS_ID], "targets": labels}

    def feature_encoders(self, data_dir):
        labels = text_encoder.ClassLabelEncoder(["x", "y", "z"])
        return {"inputs": text_encoder.ByteTextEncoder(), "targets": labels}

    def hparams(self, defaults, model_hparams):
        defaults.modality = {
            "inputs": modalities.ModalityType.SYMBOL,
            "targets": modalities.ModalityType.ONE_HOT_CLASS_LABEL,
        }
        defaults.vocab_size = {"inputs": 256, "targets": 3}


@registry.register_problem
class TaggedLinesPlain(TaggedLines):
    def feature_encoders(self, data_dir):
        return text_problems.Text2TextProblem.feature_encoders(self, data_dir)
"""


def test_datagen_writes_a_problem_whose_encoders_only_the_trainer_refuses(tmp_path, capsys):
    """T2T's datagen of a problem with its own encoded samples never calls feature_encoders:
    datagen writes its files and goes on to the next problem; the trainer refuses it."""
    from t2t_repro.commands import trainer

    usr = tmp_path / "labels_usr.py"
    usr.write_text(LABELS_USR_DIR)
    data = tmp_path / "data"
    data.mkdir()
    flags = [f"--data_dir={data}", f"--tmp_dir={tmp_path}", f"--t2t_usr_dir={usr}"]
    assert datagen.main(["--problem=tagged_lines,tagged_lines_plain", *flags, "--noprogress"]) == 0
    capsys.readouterr()
    for name in ("tagged_lines", "tagged_lines_plain"):
        assert len(list(data.glob(f"{name}-*"))) == 3, name  # 2 train + 1 dev shards
    train = ["--problem=tagged_lines", "--hparams_set=transformer_tiny"]
    assert trainer.main([*train, *flags, f"--output_dir={tmp_path / 'run'}"]) == 1
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "'one_hot_class_label'" in err and "CLASS_LABEL" in err, err


@pytest.mark.slow  # a tiny classifier's training run and decodes
@pytest.mark.usefixtures("without_grappler_here")  # plumbing: tests/grappler.py
def test_a_text_classifier_trains_evaluates_and_decodes_labels(tmp_path, capsys):
    """T2T's datagen of a Text2ClassProblem (above) trains here as T2T's
    ``transformer_encoder`` with a class-label target: evaluation reports accuracy, and
    t2t-decoder writes each line's label name (ClassLabelEncoder's); ``--model=transformer``
    is refused in one line, as a class label is not a symbol target."""
    from t2t_repro.commands import decoder, trainer
    from tests.tools import TINY_PLUMBING

    data = REFERENCE / "data" / "class_label_usr"
    flags = [
        "--problem=line_sentiment",
        f"--data_dir={data}",
        f"--t2t_usr_dir={USR_DIRS / 'class_label_usr'}",
        "--hparams_set=transformer_tiny",
    ]
    out = tmp_path / "run"
    train = [f"--hparams={TINY_PLUMBING}", f"--output_dir={out}", "--train_steps=3"]
    assert trainer.main([*flags, *train, "--schedule=train_and_evaluate"]) == 1
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "--model=transformer_encoder" in err, err
    assert not out.exists()
    flags.append("--model=transformer_encoder")
    every = "--local_eval_frequency=3"  # T2T's ValidationMonitor: an eval every N steps only
    assert trainer.main([*flags, *train, every, "--schedule=train_and_evaluate"]) == 0
    log = capsys.readouterr().out
    assert re.search(r"eval at step 3: loss [\d.]+, .*accuracy [01]\.\d{4}", log), log
    # T2T's metrics of the argmax label (Text2TextProblem's list); no dev decodes of a label
    assert (
        all(f"{m} " in log for m in ("approx_bleu_score", "rouge_L_fscore")) and "BLEU" not in log
    )
    lines = tmp_path / "lines.txt"
    lines.write_text("this book has a tree\n\na cat sees my house\n", encoding="utf-8")
    result = tmp_path / "labels.txt"
    args = [
        f"--output_dir={out}",
        "--decode_hparams=return_beams=True,write_beam_scores=True",
        f"--decode_from_file={lines}",
        f"--decode_to_file={result}",
    ]
    assert decoder.main([*flags, *args]) == 0
    rows = result.read_text(encoding="utf-8").split("\n")
    assert len(rows) == 4 and rows[3] == "", rows  # the empty line: EOS alone's label (T2T's)
    for row in rows[:3]:
        label, score = row.split("\t")
        # "%.2f" (T2T's): a score rounded to two places, of at least log(1/2)
        assert label in ("negative", "positive") and -0.69 <= float(score) <= 0, row
    # The dev split (its text in --tmp_dir): one label a record, its reference the label's name.
    split = [f"--output_dir={out}", f"--tmp_dir={REFERENCE / 'tmp' / 'class_label_usr'}"]
    assert decoder.main([*flags, *split, f"--decode_to_file={tmp_path / 'dev'}"]) == 0
    (decodes,) = tmp_path.glob("dev.*.decodes")
    (targets,) = tmp_path.glob("dev.*.targets")
    for written in (decodes, targets):
        rows = written.read_text(encoding="utf-8").splitlines()
        assert len(rows) == 3 and set(rows) <= {"negative", "positive"}, rows
