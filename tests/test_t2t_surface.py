"""T2T 1.15's public surface of the modules usr_dirs import (#46): every public function,
class and constant of T2T 1.15.7's ``utils.{registry, hparam, metrics, t2t_model}``,
``data_generators.{problem, text_problems, translate, text_encoder, generator_utils,
tokenizer}``, ``models.transformer``, ``layers.{common_hparams, modalities}`` and
``utils.{mlperf_log, mlperf_tags}`` (every module the edge aliases) exists in the T2T edge;
each works, or raises one line naming what to use instead when it is called (a constant: when
it is read; a constant T2T binds to a literal has T2T's value). The names were read from T2T
1.15.7's own source (``tools/t2t_reference/list_t2t_public_names.py``), so T2T need not be
installed here."""

import json
import sys
from pathlib import Path

import pytest

from t2t_repro.t2t_compat import aliases, refusals
from tests.usr_dir_registry import restored_registry

NAMES = json.loads(
    (Path(__file__).resolve().parent / "data" / "t2t_1.15.7_public_names.json").read_text()
)
MODULES = NAMES["modules"]


@pytest.fixture(scope="module", autouse=True)
def restore_registry():
    """T2T's own problems (text2text_tmpdir...) are registered for this module only."""
    yield from restored_registry(set())


@pytest.fixture(scope="module")
def edge():
    assert aliases.install()
    return {name: sys.modules[name] for name in MODULES}


def _is_refused(obj) -> bool:
    return refusals.is_stand_in(obj)


def _one_line(error, name: str) -> None:
    message = str(error)
    assert "\n" not in message and message.startswith(f"{name} is not provided"), message
    assert "docs/porting.md" in message, message


def test_the_recorded_names_are_t2t_1_15_7s():
    assert NAMES["tensor2tensor"] == "1.15.7"
    assert set(MODULES) == {f"tensor2tensor.{m}" for m in ("utils.registry", "utils.hparam")} | {
        f"tensor2tensor.data_generators.{m}"
        for m in (
            "problem",
            "text_problems",
            "translate",
            "text_encoder",
            "generator_utils",
            "tokenizer",
        )
    } | {
        "tensor2tensor.models.transformer",
        "tensor2tensor.layers.common_hparams",
        "tensor2tensor.layers.modalities",
        "tensor2tensor.utils.metrics",
        "tensor2tensor.utils.t2t_model",
        "tensor2tensor.utils.mlperf_log",
        "tensor2tensor.utils.mlperf_tags",
        "tensor2tensor.utils.bleu_hook",
    }
    registry_names = MODULES["tensor2tensor.utils.registry"]
    assert {"register_problem", "register_ranged_hparams", "list_problems"} <= set(
        registry_names["functions"]
    )
    assert len(MODULES["tensor2tensor.models.transformer"]["functions"]) > 100


@pytest.mark.parametrize("module", sorted(MODULES))
def test_every_public_name_exists_and_works_or_refuses_in_one_line(edge, module):
    kinds = MODULES[module]
    for name in kinds["functions"] + kinds["classes"]:
        obj = getattr(edge[module], name)  # the import a usr_dir does never fails
        assert callable(obj), (module, name)
        if _is_refused(obj):
            with pytest.raises(refusals.T2TApiError) as e:
                obj()
            _one_line(e.value, f"{module}.{name}")
            with pytest.raises(refusals.T2TApiError):
                obj("any", argument=1)
    for name in kinds["constants"]:
        if name in refusals.REFUSED_CONSTANTS.get(module, {}):
            with pytest.raises(refusals.T2TApiError) as e:
                getattr(edge[module], name)
            _one_line(e.value, f"{module}.{name}")
        elif name in kinds["values"]:  # bound to a literal in T2T: the same value here
            assert getattr(edge[module], name) == kinds["values"][name], (module, name)
        else:
            assert getattr(edge[module], name) is not None, (module, name)


def test_the_refusal_table_names_only_t2ts_names_and_nothing_the_edge_defines(edge):
    """The table cannot drift from T2T (a name T2T lacks) or shadow a mapped name."""
    for module, names in refusals.REFUSED.items():
        recorded = MODULES[module]
        assert set(names) <= set(recorded["functions"] + recorded["classes"]), module
        assert not set(names) & set(vars(edge[module])), module
    for module, names in refusals.REFUSED_CONSTANTS.items():
        assert set(names) <= set(MODULES[module]["constants"]), module
    with pytest.raises(AttributeError):  # a name T2T does not have either stays an error
        edge["tensor2tensor.models.transformer"].transformer_no_such_set  # noqa: B018


def test_refused_names_import_subclass_and_decorate_then_refuse_when_called(edge):
    """A usr_dir that only names them imports; using them is one line."""
    text_problems = edge["tensor2tensor.data_generators.text_problems"]
    registry = edge["tensor2tensor.utils.registry"]
    from tensor2tensor.data_generators.generator_utils import pack_examples  # noqa: F401

    class MyDistributed(text_problems.DistributedText2TextProblem):
        def num_output_shards(self):
            return 8

    assert issubclass(MyDistributed, text_problems.DistributedText2TextProblem)
    with pytest.raises(refusals.T2TApiError, match=r"\.DistributedText2TextProblem is not"):
        MyDistributed()
    with pytest.raises(refusals.T2TApiError, match=r"registry\.Registries is not provided"):
        registry.Registries.problems  # noqa: B018
    with pytest.raises(refusals.T2TApiError, match=r"register_optimizer.*hparams"):
        registry.register_optimizer(lambda: None)
    assert registry.Registries is registry.Registries  # one stand-in a name


def test_mapped_names_mean_what_t2t_means(edge):
    registry = edge["tensor2tensor.utils.registry"]
    text_encoder = edge["tensor2tensor.data_generators.text_encoder"]
    generator_utils = edge["tensor2tensor.data_generators.generator_utils"]
    transformer = edge["tensor2tensor.models.transformer"]
    assert registry.default_object_name(text_encoder.ByteTextEncoder()) == "byte_text_encoder"
    assert registry.base_problem("text2text_tmpdir").__name__ == "Text2textTmpdir"
    assert "text2text_tmpdir_tokens" in registry.help_string()
    assert text_encoder.to_unicode(b"gr\xc3\xbc\xc3\x9fe") == "grüße"
    assert text_encoder.to_unicode_ignore_errors(b"a\xffb") == "ab"
    assert text_encoder.is_unicode("x") and not text_encoder.is_unicode(b"x")
    assert all(
        isinstance(e, text_encoder.TextEncoder)
        for e in (
            text_encoder.ByteTextEncoder(),
            text_encoder.TokenTextEncoder(None, vocab_list=[]),
        )
    )
    assert generator_utils.combined_data_filenames("p", "d", 2) == [
        "d/p-train-00000-of-00002",
        "d/p-train-00001-of-00002",
        "d/p-dev-00000-of-00001",
        "d/p-test-00000-of-00001",
    ]
    from t2t_repro import registry as project_registry

    assert transformer.transformer_parsing_base() == project_registry.hparams(
        "transformer_parsing_base"
    )
    # T2T's TextEncoder defaults: ids are the text's integers past the reserved ones.
    base = text_encoder.TextEncoder()
    assert base.encode("0 5") == [2, 7] and base.decode([1, 2, 7]) == "<EOS> 0 5"
    assert base.decode([2, 7, 1, 0], strip_extraneous=True) == "0 5"


def test_encoders_take_t2ts_arguments_lists_and_bytes(edge, capsys):
    """What an audit found running with another meaning: build_to_target_size's positional
    order, a list's repeated reserved tokens, bytes that are not UTF-8 (T2T drops them), and
    T2T's public num_reserved_ids and dump()."""
    text_encoder = edge["tensor2tensor.data_generators.text_encoder"]
    counts = {"hello": 50, "world": 40, "help": 30, "held": 20}
    build = text_encoder.SubwordTextEncoder.build_to_target_size
    positional = build(100, counts, 1, 1000, 2)  # T2T's 5th argument: max_subtoken_length
    capped = build(100, counts, 1, 1000, max_subtoken_length=2)
    assert positional.all_subtoken_strings == capped.all_subtoken_strings
    assert max(len(s) for s in capped.all_subtoken_strings[2:]) <= 2  # past <pad>_, <EOS>_
    assert "hello_" in build(100, counts, 1, 1000).all_subtoken_strings  # uncapped
    assert capped.encode(b"help\xff") == capped.encode("help")
    assert text_encoder.native_to_unicode(b"a\xffb") == "ab"
    capped.dump()
    assert capsys.readouterr().out.startswith("0 : '<pad>_', 1 : '<EOS>_', 2 : 'l', ")
    tokens = text_encoder.TokenTextEncoder(None, vocab_list=["<pad>", "<EOS>", "a", "<EOS>", "b"])
    assert tokens.vocab_size == 4 and tokens.encode("a b") == [2, 3]
    assert tokens.num_reserved_ids == 2
    with pytest.raises(ValueError, match="vocab_filename or a vocab_list"):
        text_encoder.TokenTextEncoder(None)


def test_tokenizer_counts_files_as_t2t_reads_them(edge, tmp_path):
    tokenizer = edge["tensor2tensor.data_generators.tokenizer"]
    (tmp_path / "b.txt").write_text("  the cat, the dog\nlast line\n", encoding="utf-8")
    (tmp_path / "a.txt").write_text("the end.\n", encoding="utf-8")
    # Sorted files, stripped lines, at most 2 lines in all: a.txt's line, b.txt's first.
    counts = tokenizer.corpus_token_counts(str(tmp_path / "*.txt"), 2)
    assert counts == {"the": 3, "end": 1, ".": 1, "cat": 1, ", ": 1, "dog": 1}
    whole = tokenizer.corpus_token_counts(str(tmp_path / "b.txt"), None, split_on_newlines=False)
    assert whole == {"  ": 1, "the": 2, "cat": 1, ", ": 1, "dog": 1, "\n": 2, "last": 1, "line": 1}
    (tmp_path / "v.csv").write_text("the,5\nno comma\na,b,2\n", encoding="utf-8")
    assert tokenizer.vocab_token_counts(str(tmp_path / "v.csv"), None) == {"the": 5, "a,b": 2}
    assert tokenizer.decode(tokenizer.encode("the cat, the dog")) == "the cat, the dog"


def test_boilerplate_modules_import_and_refuse_in_one_line_when_used():
    from t2t_repro.usr_dir import import_usr_dir  # noqa: F401  (installs as a usr_dir does)

    assert aliases.install()
    from tensor2tensor.data_generators import problem_hparams
    from tensor2tensor.layers import common_attention
    from tensor2tensor.utils import decoding

    for module, attr, instead in (
        (decoding, "decode_from_file", "t2t-decoder"),
        (common_attention, "multihead_attention", "only this project's own transformer"),
        (problem_hparams, "test_problem_hparams", "hparams(defaults, model_hparams)"),
    ):
        with pytest.raises(refusals.T2TApiError) as e:
            getattr(module, attr)()  # it imports and can be named: using it is refused
        _one_line(e.value, f"{module.__name__}.{attr}")
        assert instead in str(e.value)


def test_mlperf_logging_is_t2ts_no_op_unless_mlperf_mode(edge):
    """T2T's Text2TextProblem.generate_encoded_samples (copied into usr_dirs) calls
    transformer_print without hparams: a no-op in T2T (utils/mlperf_log.py), here too."""
    from tensor2tensor.utils import mlperf_log

    from t2t_repro.hparam import HParams

    tags = MODULES["tensor2tensor.utils.mlperf_tags"]
    for name in tags["constants"]:  # T2T's star import of mlperf_tags
        assert getattr(mlperf_log, name) == getattr(edge["tensor2tensor.utils.mlperf_tags"], name)
    assert len(tags["values"]) == 68 and mlperf_log.OPT_HP_ADAM_BETA1 == "opt_hp_Adam_beta1"
    assert mlperf_log.PREPROC_TOKENIZE_TRAINING in mlperf_log.TRANSFORMER_TAG_SET
    assert mlperf_log.transformer_print(key=mlperf_log.PREPROC_TOKENIZE_TRAINING) is None
    off = HParams(mlperf_mode=False)
    assert mlperf_log.transformer_print(key=mlperf_log.RUN_START, value=1, hparams=off) is None
    assert not mlperf_log.get_mode(HParams(hidden_size=8))
    with pytest.raises(refusals.T2TApiError) as e:
        mlperf_log.transformer_print(key=mlperf_log.RUN_START, hparams=HParams(mlperf_mode=True))
    assert "\n" not in str(e.value) and "mlperf_mode" in str(e.value), e.value
    assert mlperf_log.get_caller(1).startswith(f"{__file__}:")
