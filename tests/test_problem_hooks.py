"""A task plugs in its own dev metric and search constraint through ``Problem`` hooks; the
trainer and the decoder use them without knowing the task (docs/problems.md)."""

import numpy as np
import pytest
import tensorflow as tf

from t2t_repro import registry
from t2t_repro.builtin.problems.algorithmic import TranslateToy
from t2t_repro.decoding.constraints import SearchConstraint
from t2t_repro.metrics.dev_metric import DevMetric
from t2t_repro.text_encoding.reserved_tokens import EOS_ID
from t2t_repro.training.config import TrainerConfig

# Imported here, not under capsys: its ConsoleLog binds sys.stdout at import.
from t2t_repro.training.trainer import Trainer
from tests.tools import NO_DROPOUT, NO_ENCODER_LAYER, SMALL_BATCH_SHUFFLE

NAME = "toy_with_hooks"
BANNED = 5  # a target id the constraint never allows


# The runs check which metric and constraint the tools take.
# Without Grappler: tests/grappler.py.
pytestmark = pytest.mark.usefixtures("without_grappler")


class CountingMetric(DevMetric):
    """Scores the decodes by their mean word count; records what it was handed."""

    name = "words"
    decode_overrides = "beam_size=1,batch_size=8"

    def __init__(self, lines):
        super().__init__(lines=lines)
        self.seen: list[list[str]] = []

    def score(self, hypotheses):
        self.seen.append(list(hypotheses))
        return {"toy_words": float(np.mean([len(h.split()) for h in hypotheses]))}

    def log_text(self, scores):
        return f", toy words {scores['toy_words']:.2f} ({len(self)} lines)"


class CapConstraint(SearchConstraint):
    """At most as many output ids as the source line has words, and never ``BANNED``; its
    input (the word count) comes from the lines."""

    def __init__(self, vocab_size):
        self.vocab_size = vocab_size

    def batch_inputs(self, rows, lines, length):
        return (np.array([len(line.split()) for line in lines], np.int32),)

    def initial_state(self, words):
        return {"words": words}

    def allowed_next(self, ids, i, state, decode_length):
        eos = tf.one_hot(EOS_ID, self.vocab_size, on_value=True, off_value=False)[None]
        free = ~tf.one_hot(BANNED, self.vocab_size, on_value=True, off_value=False)[None]
        return tf.where((i >= state["words"])[:, None], eos, free), state


class ToyWithHooks(TranslateToy):
    """translate_toy, small, with its own dev metric and search constraint."""

    num_shards = {"train": 1, "dev": 1, "test": 1}
    num_pairs = {"train": 400, "dev": 10, "test": 10}
    metrics: list = []

    def dev_metric(self, data_dir, hparams, num_examples):
        lines = [src for src, _ in self.corpus()["dev"][:num_examples]]
        ToyWithHooks.metrics.append(CountingMetric(lines))
        return ToyWithHooks.metrics[-1]

    def search_constraint(self, data_dir, decode_hparams):
        return CapConstraint(self.vocab_sizes(data_dir)[1])


@pytest.fixture(scope="module")
def toy_data(tmp_path_factory):
    registry.register_problem(NAME)(ToyWithHooks)
    root = tmp_path_factory.mktemp("hooks")
    registry.problem(NAME).generate_data(str(root / "data"), str(root / "tmp"), progress=False)
    yield root / "data"
    registry._REGISTRIES[registry.PROBLEMS].pop(NAME)


@pytest.mark.slow
def test_trainer_and_decoder_use_the_problems_metric_and_constraint(toy_data, tmp_path, capsys):
    cfg = TrainerConfig(
        problem=NAME,
        hparams_set="transformer_tiny",
        data_dir=str(toy_data),
        output_dir=str(tmp_path / "train"),
        hparams=f"hidden_size=16,filter_size=32,num_heads=2,{NO_ENCODER_LAYER},batch_size=256,"
        + f"{NO_DROPOUT},{SMALL_BATCH_SHUFFLE}",
        train_steps=4,
        local_eval_frequency=4,
        eval_steps=1,
        eval_decode_examples=6,
        attention_images=False,
        random_seed=1,
    )
    results = Trainer(cfg).run()
    metric = ToyWithHooks.metrics[-1]
    assert len(metric) == 6 and len(metric.seen) == 1 and len(metric.seen[0]) == 6
    assert results["toy_words"] == np.mean([len(h.split()) for h in metric.seen[0]])
    assert f", toy words {results['toy_words']:.2f} (6 lines)" in capsys.readouterr().out
    # The decoder (t2t-decoder's) builds the problem's constraint and its inputs from the lines.
    from t2t_repro.decoding.runner import load_decoder

    train_dir = str(tmp_path / "train")
    setup = load_decoder(NAME, "", "", str(toy_data), train_dir, decode_overrides="beam_size=1")
    decodes = setup.decoder.decode_lines(metric.lines)
    assert [h[0].text for h in decodes] == metric.seen[0]  # what the trainer scored
    lines = metric.lines + ["a"]
    decodes += setup.decoder.decode_lines(["a"])
    for line, hyps in zip(lines, decodes, strict=True):
        assert len(hyps[0].ids) <= len(line.split()) and BANNED not in hyps[0].ids
    assert max(len(h[0].ids) for h in decodes) > 1  # the cap lets real outputs through


def test_old_flag_name_is_an_alias():
    from t2t_repro.commands.trainer import build_parser
    from t2t_repro.training.config import config_from_flags

    base = ["--problem=p", "--hparams_set=h", "--data_dir=d", "--output_dir=o"]
    for flag in ("--eval_bleu_examples=7", "--eval_decode_examples=7"):
        args = build_parser().parse_args([*base, flag])
        assert config_from_flags(vars(args)).eval_decode_examples == 7
    flags = {"problem": "p", "hparams_set": "h", "data_dir": "d", "output_dir": "o"}
    assert config_from_flags({**flags, "eval_bleu_examples": 3}).eval_decode_examples == 3


def test_word_dropout_is_the_problems_training_augmentation(tmp_path):
    from t2t_repro.hparam import HParamsError
    from t2t_repro.hparams_lib.build import create_hparams
    from tests.test_wsj_parsing import make_ldc

    raw = str(make_ldc(tmp_path / "raw"))
    for name in ("wsj_parsing_words", "wsj_parsing_ldc"):  # one id per word; subwords
        registry.problem(name).generate_data(str(tmp_path / name), raw, progress=False)

    def augmentation(name, overrides):
        problem, data_dir = registry.problem(name), str(tmp_path / name)
        hp = create_hparams("transformer_tiny", overrides, **problem.problem_hparams(data_dir))
        return problem.train_augmentation(data_dir, hp, 1)

    assert callable(augmentation("wsj_parsing_words", "word_dropout_alpha=2"))
    assert augmentation("wsj_parsing_words", "") is None
    with pytest.raises(HParamsError, match="word-level source"):
        augmentation("wsj_parsing_ldc", "word_dropout_alpha=2")
