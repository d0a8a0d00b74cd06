"""T2T's ``<name>_rev`` of a usr_dir's problem (T2T's ``utils/registry.py``, ``problem``:
``cls(was_reversed=True)``): it reads ``<name>``'s files with inputs and targets swapped
(``data_generators/problem.py``: ``dataset`` maps ``maybe_reverse_and_copy`` after
``decode_example`` and ``preprocess_example``), its problem hparams reversed
(``_reverse_problem_hparams``) and its eval tags ``metrics-<name>_rev/...``
(``utils/metrics.py``, ``create_evaluation_metrics``). ``_copy`` stays refused in one line.

Expected values come from T2T, never from this project: the committed reference data dirs
and JSONs were written by T2T 1.15.7 itself (tools/t2t_reference/), and T2T 1.15.7 (the
venv of the session) gave for ``words_en_to_de_rev``: ``name`` and ``dataset_filename``
"words_en_to_de", ``was_reversed`` True, vocab sizes inputs 15 / targets 16; for
``hparams_hook_problem_rev``: input space id 3, target space id 2 -- the reference JSONs'
base values swapped, as ``_reverse_problem_hparams`` swaps them."""

import json
import shutil
from pathlib import Path

import pytest
import tensorflow as tf

from t2t_repro import registry
from t2t_repro.commands import datagen, decoder, trainer
from t2t_repro.hparams_lib.build import create_run_hparams, model_hparams_for_problem
from t2t_repro.t2t_compat.problem import T2TProblemError
from t2t_repro.t2t_compat.problem_hparams import default_model_hparams
from t2t_repro.usr_dir import import_usr_dir
from tests.tools import NO_DROPOUT, PLUMBING_MODEL, SMALL_BATCH_SHUFFLE
from tests.usr_dir_registry import restored_registry

DATA = Path(__file__).resolve().parent / "data"
USR_DIR = DATA / "t2t_usr_dir_patterns" / "two_token_vocabs_usr"
REFERENCE = DATA / "t2t_usr_dir_patterns_reference"
WORDS = REFERENCE / "data" / "two_token_vocabs_usr"  # T2T 1.15.7's datagen of words_en_to_de
T2T_SIZES = json.loads((REFERENCE / "t2t_1.15.7_datagen.json").read_text())["vocab_sizes"]
HOOKS = DATA / "t2t_usr_dir_hooks_reference"
T2T_HOOKS = json.loads((HOOKS / "t2t_1.15.7_datagen.json").read_text())["problem_hparams"]
BASE, REV = "words_en_to_de", "words_en_to_de_rev"


@pytest.fixture(scope="module", autouse=True)
def usr_dirs():
    """The usr_dirs' names are registered for this module only."""
    restore = restored_registry({"two_token_vocabs_usr", "t2t_usr_dir_hooks", "lm_self_usr"})
    next(restore)
    import_usr_dir(str(USR_DIR))
    import_usr_dir(str(DATA / "t2t_usr_dir_hooks"))
    yield
    next(restore, None)


def _records(path: Path) -> list[dict]:
    """The shard's records as T2T wrote them, read without any problem."""
    out = []
    for raw in tf.data.TFRecordDataset(str(path)).as_numpy_iterator():
        feature = tf.train.Example.FromString(raw).features.feature
        out.append({k: list(feature[k].int64_list.value) for k in ("inputs", "targets")})
    return out


def test_x_rev_is_made_from_the_registered_name_and_reads_its_files():
    """A registered name always wins; x_rev is never listed, as in T2T (its names are parsed)."""
    rev = registry.problem(REV)
    assert type(rev) is type(registry.problem(BASE)) and rev.was_reversed
    assert (rev.name, rev.dataset_filename()) == (BASE, BASE)  # T2T's, as T2T 1.15.7 gives
    assert rev.filepattern(str(WORDS), "train") == str(WORDS / f"{BASE}-train*")
    assert REV not in registry.list_names(registry.PROBLEMS)


def test_its_records_are_the_bases_swapped_after_t2ts_truncation():
    """T2T's preprocess_example truncates max_input_seq_length on the record as written, then
    maybe_reverse_features swaps: the swapped targets are the base's inputs, cut to 2."""
    hparams = default_model_hparams(str(WORDS))
    hparams.set_hparam("max_input_seq_length", 2)
    read = registry.problem(REV).read_example_fn("eval", hparams)
    shard = WORDS / f"{BASE}-dev-00000-of-00001"
    got = [
        {k: v.numpy().tolist() for k, v in example.items() if k in ("inputs", "targets")}
        for example in tf.data.TFRecordDataset(str(shard)).map(read)
    ]
    base = _records(shard)
    assert len(got) == len(base) > 0
    assert got == [{"inputs": r["targets"], "targets": r["inputs"][:2]} for r in base]


def test_its_problem_hparams_and_encoders_are_t2ts_reversed():
    rev = registry.problem(REV)
    sizes = {k: e.vocab_size for k, e in rev.get_encoders(str(WORDS)).items()}
    base = T2T_SIZES[BASE]
    assert base == {"inputs": 16, "targets": 15}  # T2T's, of words_en_to_de
    assert sizes == {"inputs": base["targets"], "targets": base["inputs"]}
    hp = rev.problem_hparams(str(WORDS))
    assert (hp["input_vocab_size"], hp["target_vocab_size"]) == (15, 16)
    # its inputs are encoded with the German word list (T2T's TokenTextEncoder: a line's id)
    de = (WORDS / "words.de.vocab").read_text(encoding="utf-8").split("\n")
    assert rev.get_encoders(str(WORDS))["inputs"].encode("meine Hund hat") == [
        de.index(w) for w in ("meine", "Hund", "hat")
    ]
    t2t = T2T_HOOKS["hparams_hook_problem"]  # T2T's: input space 2 (EN_CHR), target 3 (EN_TOK)
    assert (t2t["input_space_id"], t2t["target_space_id"]) == (2, 3)
    hooked, data = registry.problem("hparams_hook_problem_rev"), str(HOOKS / "data")
    assert create_run_hparams(hooked, data, "transformer_tiny_hooks").target_space_id == 2
    # T2T's own object, as _reverse_problem_hparams leaves it
    t2t_hp = hooked.get_hparams(model_hparams_for_problem("transformer_tiny_hooks", data_dir=data))
    assert (t2t_hp.input_space_id, t2t_hp.target_space_id, t2t_hp.was_reversed) == (3, 2, True)


def test_its_texts_are_swapped():
    """hparams_hook_problem deals one stream over 2 train shards and 1 dev shard (T2T's
    generate_files): its dev texts are every third pair of the files, here swapped."""
    src, tgt = (
        (HOOKS / "tmp" / name).read_text(encoding="utf-8").splitlines()[2::3]
        for name in ("translit.src", "translit.tgt")
    )
    rev = registry.problem("hparams_hook_problem_rev")
    assert rev.source_lines(str(HOOKS / "tmp"), "dev") == (tgt, src)


def test_its_datagen_writes_the_bases_files(tmp_path, capsys):
    """T2T's t2t-datagen has no _rev names: here it writes the base's files (T2T's bytes)."""
    tmp = tmp_path / "tmp"
    shutil.copytree(REFERENCE / "tmp" / "two_token_vocabs_usr", tmp)
    argv = [f"--problem={REV}", f"--data_dir={tmp_path / 'data'}", f"--tmp_dir={tmp}"]
    assert datagen.main([*argv, f"--t2t_usr_dir={USR_DIR}", "--num_workers=1"]) == 0
    assert f"{REV} reads {BASE}'s files" in capsys.readouterr().err
    for path in WORDS.iterdir():
        assert (tmp_path / "data" / path.name).read_bytes() == path.read_bytes(), path.name


def test_x_copy_is_t2ts_copy_of_the_inputs():
    """T2T's <name>_copy (problem.py: maybe_copy_features, _copy_problem_hparams): the base's
    records with the inputs as targets too; the inputs' vocabulary and size for the targets
    (T2T 1.15.7's sizes of words_en_to_de: inputs 16, as above); its texts likewise; and
    x_copy_rev (T2T's grammar) reverses, then copies."""
    copy = registry.problem(f"{BASE}_copy")
    assert copy.name == BASE and copy.filepattern("/d", "dev") == f"/d/{BASE}-dev*"
    hparams = default_model_hparams(str(WORDS))
    read = copy.read_example_fn("eval", hparams)
    shard = WORDS / f"{BASE}-dev-00000-of-00001"
    got = [
        {k: v.numpy().tolist() for k, v in example.items() if k in ("inputs", "targets")}
        for example in tf.data.TFRecordDataset(str(shard)).map(read)
    ]
    assert got == [{"inputs": r["inputs"], "targets": r["inputs"]} for r in _records(shard)]
    assert copy.vocab_sizes(str(WORDS)) == (T2T_SIZES[BASE]["inputs"],) * 2
    src = (HOOKS / "tmp" / "translit.src").read_text(encoding="utf-8").splitlines()[2::3]
    hooked = registry.problem("hparams_hook_problem_copy")
    assert hooked.source_lines(str(HOOKS / "tmp"), "dev") == (src, src)  # as its texts above
    both = registry.problem(f"{BASE}_copy_rev")  # reversed, then copied: the base's targets
    assert both.vocab_sizes(str(WORDS)) == (T2T_SIZES[BASE]["targets"],) * 2


def test_an_lm_rev_is_refused_in_one_line():
    """A _rev of a problem without inputs would have no targets (T2T's swap moves them)."""
    import_usr_dir(str(DATA / "t2t_usr_dir_patterns" / "lm_self_usr"))
    lm = registry.problem("char_lines_lm_rev")
    with pytest.raises(T2TProblemError, match="without inputs"):
        lm.get_encoders(str(REFERENCE / "data" / "lm_self_usr"))


@pytest.mark.slow  # a 2-step training run of a one-layer model, its eval and a decode
@pytest.mark.usefixtures("without_grappler_here")  # plumbing: tests/grappler.py
def test_x_rev_trains_evaluates_under_its_tag_and_decodes(tmp_path):
    common = [
        f"--problem={REV}",
        f"--data_dir={WORDS}",
        f"--output_dir={tmp_path / 'train'}",
        f"--t2t_usr_dir={USR_DIR}",
    ]
    argv = [
        *common,
        "--hparams_set=transformer_tiny",
        # 256 tokens a batch, not transformer_tiny's 4,096: batches of a few hundred of these
        # short sentences, not of thousands (the 16 shuffled batches were ~2 core-s of reading
        # before step 1)
        f"--hparams={PLUMBING_MODEL},{NO_DROPOUT},{SMALL_BATCH_SHUFFLE},batch_size=256",
        "--train_steps=2",
        "--schedule=train_and_evaluate",
        "--local_eval_frequency=2",
        "--eval_decode_examples=0",  # the tags are the teacher-forced eval's (~1 core-s less)
        "--no-attention_images",
        "--random_seed=1",
    ]
    assert trainer.main(argv) == 0
    saved = json.loads((tmp_path / "train" / "hparams.json").read_text())
    assert (saved["input_vocab_size"], saved["target_vocab_size"]) == (15, 16)  # inputs: German
    tags = {
        value.tag
        for event_file in (tmp_path / "train" / "eval").glob("events.*")
        for event in tf.compat.v1.train.summary_iterator(str(event_file))
        for value in event.summary.value
    }
    assert f"metrics-{REV}/targets/accuracy" in tags, tags  # T2T's create_evaluation_metrics
    src, out = tmp_path / "src.txt", tmp_path / "out.txt"
    src.write_text("meine Hund hat\ndie Haus\n", encoding="utf-8")
    flags = [f"--decode_from_file={src}", f"--decode_to_file={out}"]
    assert decoder.main([*common, *flags, "--decode_hparams=beam_size=1,extra_length=3"]) == 0
    decoded = out.read_text(encoding="utf-8").split("\n")
    en = set((WORDS / "words.en.vocab").read_text(encoding="utf-8").split("\n"))
    assert len(decoded) == 3 and set(" ".join(decoded).split()) <= en  # English words only


def test_t2t_import_reads_x_revs_vocabulary_and_space_id():
    """t2t-import --problem=x_rev checks the checkpoint's sizes against x_rev's (swapped)
    vocabularies, as it does for a registered name (it said "not registered")."""
    from t2t_repro.t2t_import.writer import T2TImportError, _problem_values

    notes: list[str] = []
    sizes = {"input_vocab_size": 15, "target_vocab_size": 16}  # T2T 1.15.7's, as above
    values = _problem_values(REV, sizes, str(WORDS), "", notes.append)
    assert values["target_space_id"] == 0 and not [n for n in notes if "not registered" in n]
    with pytest.raises(T2TImportError, match="16 \\(inputs\\) / 15 \\(targets\\)"):
        _problem_values(BASE, sizes, str(WORDS), "", notes.append)  # the base's: not swapped


def test_a_usr_dir_subclass_of_the_projects_t2t_named_problem_has_its_rev():
    """T2T's registry gives every registered problem its _rev; a usr_dir subclass of
    translate_ende.TranslateEndeWmt32k (the project's class under T2T's name) gets the
    project's kind of it: the subclass's files, swapped."""
    from t2t_repro.builtin.problems.translate_wmt import TranslateEndeWmt32k
    from t2t_repro.t2t_compat import registry as t2t_registry

    problems = registry._REGISTRIES[registry.PROBLEMS]
    try:
        t2t_registry.register_problem(type("MyEnde", (TranslateEndeWmt32k,), {}))
        rev = registry.problem("my_ende_rev")
        assert rev.name == "my_ende_rev" and rev.filepattern("/d", "dev") == "/d/my_ende-dev-*"
        assert rev.vocab_filename == registry.problem("my_ende").vocab_filename
    finally:
        problems.pop("my_ende", None), problems.pop("my_ende_rev", None)


def test_a_rev_of_a_t2t_problem_not_provided_says_so():
    from t2t_repro.commands.builtins import register_builtins

    register_builtins()  # T2T's names not provided here (idempotent)
    with pytest.raises(
        registry.RegistryError, match="variant of 'image_mnist', which is T2T 1.15's"
    ):
        registry.problem("image_mnist_rev")
