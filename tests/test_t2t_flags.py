"""tensor2tensor 1.15's command lines parse: every T2T flag of every tool is honoured or refused
in one line naming the replacement (commands/t2t_flags.py). Parsers only: no TensorFlow work."""

import argparse

import pytest

from t2t_repro.commands import avg_all, bleu, datagen, decoder, exporter, t2t_flags, trainer
from t2t_repro.errors import UsageError
from t2t_repro.hparam import HParamsError
from t2t_repro.hparams_lib.build import create_hparams

# The flag names of T2T 1.15.7's tools, read from its sources (flags.DEFINE_* in bin/t2t_trainer.py
# + utils/flags.py + data_generators/wsj_parsing.py (all_problems); t2t_decoder.py imports them
# and adds its own; bin/t2t_datagen.py (+ wsj_parsing.py), bin/t2t_avg_all.py, bin/t2t_bleu.py).
T2T_TRAINER = """t2t_usr_dir random_seed tpu_num_shards tpu_job_name iterations_per_loop use_tpu
use_tpu_estimator export_saved_model_api_version use_guarantee_const_getter xla_compile
xla_jit_level tpu_infeed_sleep_secs generate_data tmp_dir profile inter_op_parallelism_threads
intra_op_parallelism_threads optionally_use_dist_strat master output_dir schedule eval_steps
std_server_protocol cloud_tpu_name cloud_mlengine cloud_mlengine_master_type
autotune_objective autotune_maximize autotune_max_trials autotune_parallel_trials job-dir
log_step_count_steps gpu_automatic_mixed_precision registry_help tfdbg export_saved_model
dbgprofile model hparams_set hparams_range hparams problem data_dir train_steps
eval_early_stopping_metric eval_early_stopping_metric_delta eval_early_stopping_steps
eval_early_stopping_metric_minimize eval_timeout_mins eval_run_autoregressive
eval_use_test_set keep_checkpoint_max enable_graph_rewriter keep_checkpoint_every_n_hours
save_checkpoints_secs log_device_placement warm_start_from local_eval_frequency
eval_throttle_seconds sync worker_job worker_gpu worker_replicas worker_id
worker_gpu_memory_fraction ps_gpu gpu_order ps_job ps_replicas decode_hparams
decode_from_file decode_to_file decode_reference parsing_path""".split()
T2T_DECODER = (
    T2T_TRAINER
    + """checkpoint_path keep_timestamp decode_interactive decode_shards
score_file decode_in_memory disable_grappler_optimizations""".split()
)
# serving/export.py imports bin/t2t_trainer.py and adds its own.
T2T_EXPORTER = T2T_TRAINER + "export_as_tfhub export_dir checkpoint_path as_text".split()
T2T_DATAGEN = """data_dir tmp_dir problem exclude_problems num_shards max_cases
env_problem_max_env_steps env_problem_batch_size only_list random_seed task_id task_id_start
task_id_end num_concurrent_processes t2t_usr_dir parsing_path""".split()
T2T_AVG_ALL = "model_dir output_dir n min_steps wait_minutes".split()
T2T_BLEU = """source reference translation translations_dir event_dir bleu_variant tag_suffix
min_steps wait_minutes report_zero""".split()

TOOLS = {
    "t2t-trainer": (trainer, T2T_TRAINER),
    "t2t-decoder": (decoder, T2T_DECODER),
    "t2t-exporter": (exporter, T2T_EXPORTER),
    "t2t-datagen": (datagen, T2T_DATAGEN),
    "t2t-avg-all": (avg_all, T2T_AVG_ALL),
    "t2t-bleu": (bleu, T2T_BLEU),
}


def option_names(parser: argparse.ArgumentParser) -> set[str]:
    return {s[2:] for s in parser._option_string_actions if s.startswith("--")}


@pytest.mark.parametrize("tool", sorted(TOOLS))
def test_every_t2t_flag_parses(tool):
    module, names = TOOLS[tool]
    parser = module.build_parser()
    missing = sorted(set(names) - option_names(parser))
    assert not missing, f"{tool} lacks T2T's {missing}"
    table = {f.name for f in t2t_flags.TABLES[tool]}
    assert table <= set(names), f"{tool}'s table names non-T2T flags {sorted(table - set(names))}"


def other_value(flag: t2t_flags.T2TFlag) -> str:
    kind = flag.kind or type(flag.default)
    if kind is bool:
        return "false" if flag.default else "true"
    return {int: "7", float: "0.5"}.get(kind, "x")


@pytest.mark.parametrize("tool", sorted(TOOLS))
def test_other_t2t_flags_are_refused_in_one_line_or_accepted_with_a_reason(tool):
    module = TOOLS[tool][0]
    parser = module.build_parser()
    for flag in parser.t2t_flags:
        if flag.default is not None:  # T2T's default, given explicitly, is accepted
            given = parser.parse_args([f"--{flag.name}={flag.default}"])
            t2t_flags.check_t2t_flags(parser, given)
        args = parser.parse_args([f"--{flag.name}={other_value(flag)}"])
        if not flag.refusal:
            assert len(flag.accepted) > 20, flag  # says why nothing changes
            t2t_flags.check_t2t_flags(parser, args)
            continue
        with pytest.raises(UsageError) as e:
            t2t_flags.check_t2t_flags(parser, args)
        message = str(e.value)
        assert message.startswith(f"--{flag.name}") and "\n" not in message, message
        assert f"--{flag.name}={other_value(flag)}".lower() in message.lower()


def test_absl_boolean_forms_parse():
    parser = trainer.build_parser()
    assert parser.parse_args(["--xla_compile"]).xla_compile is True
    assert parser.parse_args(["--xla_compile=False"]).xla_compile is False
    assert parser.parse_args(["--xla_compile=true"]).xla_compile is True
    # T2T 1.15's --xla_compile has no effect off TPU: it is not --xla here
    assert parser.parse_args(["--xla", "--noxla_compile"]).xla is True
    assert parser.parse_args(["--xla_compile"]).xla is False
    assert parser.parse_args(["--generate_data=1"]).generate_data is True
    assert decoder.build_parser().parse_args(["--noeval_use_test_set"]).eval_use_test_set is False
    with pytest.raises(SystemExit):
        parser.parse_args(["--xla_compile=maybe"])


def trainer_args(*argv):
    parser = trainer.build_parser()
    args = parser.parse_args(list(argv))
    trainer.check_flags(parser, args)
    return args


def test_t2t_hp_pairs_become_hparams():
    rest, pairs = t2t_flags.split_hp_args(
        ["--problem=p", "--hp_hidden_size", "32", "--hparams=num_heads=2", "--hp_dropout=0.2"]
    )
    assert rest == ["--problem=p", "--hparams=num_heads=2"]
    assert pairs == "hidden_size=32,dropout=0.2"
    parser = trainer.build_parser()
    args = parser.parse_args(rest)
    trainer.check_flags(parser, args, pairs)
    assert args.hparams == "num_heads=2,hidden_size=32,dropout=0.2"
    with pytest.raises(UsageError, match="needs a value"):
        t2t_flags.split_hp_args(["--hp_hidden_size"])


def test_an_hparam_set_by_hparams_and_by_hp_is_refused_as_t2t_refuses_it():
    """T2T's t2t_trainer.set_hparams_from_args appends the --hp_ pairs to --hparams, and its
    HParams.parse refuses a name assigned twice; neither value is picked here."""
    rest, pairs = t2t_flags.split_hp_args(["--hparams=hidden_size=32", "--hp_hidden_size=64"])
    parser = trainer.build_parser()
    with pytest.raises(UsageError, match="--hp_hidden_size sets hidden_size, which --hparams"):
        trainer.check_flags(parser, parser.parse_args(rest), pairs)
    rest, pairs = t2t_flags.split_hp_args(["--hp_num_heads=2", "--hp_num_heads=4"])
    args = parser.parse_args(rest)
    trainer.check_flags(parser, args, pairs)  # as T2T: both pairs reach HParams.parse
    with pytest.raises(HParamsError, match="'num_heads' is given twice"):
        create_hparams("transformer_quickstart", args.hparams)


def test_trainer_aliases_and_their_conflicts():
    assert trainer_args("--gpu_automatic_mixed_precision").mixed_precision == "float16"
    assert trainer_args().mixed_precision == ""
    with pytest.raises(UsageError, match="contradicts --mixed_precision=bfloat16"):
        trainer_args("--gpu_automatic_mixed_precision", "--mixed_precision=bfloat16")
    with pytest.raises(UsageError, match="t2t-decoder --decode_from_file"):
        trainer_args("--decode_from_file=x.txt")
    # T2T 1.15's Cloud ML Engine alias: --job-dir overrides --output_dir (bin/t2t_trainer.py)
    assert trainer_args("--output_dir=a", "--job-dir=gs://b/c").output_dir == "gs://b/c"
    assert trainer_args("--output_dir=a").output_dir == "a"
    args = decoder.build_parser().parse_args(["--output_dir=a", "--job-dir=b"])
    t2t_flags.check_t2t_flags(decoder.build_parser(), args)  # accepted, as T2T's decoder does
    assert args.output_dir == "a"


def test_refused_schedules_name_what_to_run(tmp_path, capsys):
    from t2t_repro.training.config import REFUSED_SCHEDULES

    empty = tmp_path / "empty"
    empty.mkdir()
    base = [
        "--problem=translate_toy",
        "--hparams_set=transformer_tiny",
        f"--data_dir={empty}",
        f"--output_dir={tmp_path / 'train'}",
    ]
    for schedule in ("test", "continuous_decode_from_file", "bogus"):
        assert trainer.main([*base, f"--schedule={schedule}"]) == 1
        err = capsys.readouterr().err
        assert err.startswith(f"t2t-trainer: error: --schedule={schedule}") and err.count("\n") == 1
        if schedule in REFUSED_SCHEDULES:
            assert REFUSED_SCHEDULES[schedule] in err
        else:
            assert "continuous_train_and_eval" in err and "train_eval_and_decode" in err
    assert not (tmp_path / "train").exists()


def test_decoder_refuses_training_flags_and_t2t_only_modes(capsys):
    for argv, expected in (
        (["--train_steps=10"], "--train_steps is a t2t-trainer flag"),
        (["--master=grpc://x"], "one process"),
        (["--decode_shards=2"], "--decode_shards applies to --decode_from_file only"),
        (["--score_file=x"], "--score_file needs --decode_to_file"),
        (["--eval_early_stopping_steps=5"], "--eval_early_stopping_steps is a t2t-trainer flag"),
        (["--decode_interactive", "--decode_reference=r"], "not stdin's"),
    ):
        assert decoder.main(["--problem=translate_toy", *argv]) == 1
        err = capsys.readouterr().err
        assert err.startswith("t2t-decoder: error: ") and expected in err, err


def test_datagen_and_bleu_take_t2t_forms(tmp_path, capsys):
    args = datagen.build_parser().parse_args(["--num_concurrent_processes=3", "--max_cases=0"])
    assert args.num_workers == 3 and args.max_cases == 0
    assert (
        datagen.main(
            [
                "--problem=translate_*_multi30k,translate_toy*",
                "--exclude_problems=translate_toy",
                f"--data_dir={tmp_path}",
                "--only_list",
            ]
        )
        == 0
    )
    listed = capsys.readouterr().out.split()
    assert (
        listed and "translate_toy" not in listed and all(n.startswith("translate_") for n in listed)
    )
    assert not list(tmp_path.iterdir())  # --only_list generates nothing
    # T2T drops every name containing an item (t2t_datagen.py main); no --data_dir needed.
    argv = ["--problem=translate_*_multi30k,translate_toy*", "--exclude_problems=ende,_rev"]
    assert datagen.main([*argv, "--only_list"]) == 0
    assert capsys.readouterr().out.split() == ["translate_enfr_multi30k", "translate_toy"]
    # T2T's patterns match its base problems, its multi-problems too (not provided: refused).
    assert datagen.main(["--problem=languagemodel_lm1b_*", "--only_list"]) == 1
    assert "languagemodel_lm1b_sentiment_imdb, not provided" in capsys.readouterr().err
    argv = ["--problem=languagemodel_lm1b_*", "--exclude_problems=multi,sentiment", "--only_list"]
    kept = ["languagemodel_lm1b_characters", "languagemodel_lm1b_characters_packed"]
    assert datagen.main(argv) == 0 and capsys.readouterr().out.split() == kept
    assert datagen.main(["--problem=translate_toy*_rev", "--only_list"]) == 0
    assert capsys.readouterr().out.split() == ["translate_toy_rev"]
    assert datagen.main(["--problem=no_such_problem", "--only_list"]) == 1  # T2T raises
    assert "no_such_problem" in capsys.readouterr().err
    argv = ["--problem=algorithmic_copy", "--exclude_problems=copy", "--only_list"]
    assert datagen.main(argv) == 1  # nothing left: T2T raises there too
    assert "leaves none of --problem=algorithmic_copy" in capsys.readouterr().err
    # T2T raises for --num_shards with a registered problem (t2t_datagen.py); one line here.
    assert (
        datagen.main(["--problem=translate_toy", f"--data_dir={tmp_path}", "--num_shards=4"]) == 1
    )
    err = capsys.readouterr().err
    assert "--num_shards should not be set for registered Problem." in err, err
    assert len(err.strip().splitlines()) == 1 and not list(tmp_path.iterdir())
    hyp, ref = tmp_path / "hyp", tmp_path / "ref"
    hyp.write_text("the cat sat on the mat .\nA dog\n")
    ref.write_text("The cat sat on the mat .\na dog\n")
    for variant, tags in (
        ("both", ["BLEU_uncased", "BLEU_cased"]),
        ("cased", ["BLEU_cased"]),
        ("uncased", ["BLEU_uncased"]),
    ):
        assert (
            bleu.main([f"--translation={hyp}", f"--reference={ref}", f"--bleu_variant={variant}"])
            == 0
        )
        lines = capsys.readouterr().out.strip().splitlines()
        assert [line.split(" = ")[0] for line in lines] == tags
    assert bleu.main([f"--translation={hyp}", f"--reference={ref}", "--translations_dir=d"]) == 1
    assert "give --translation or --translations_dir, not both" in capsys.readouterr().err
    assert bleu.main([f"--translation={hyp}", f"--reference={ref}", "--source=src"]) == 0


def test_eval_due_follows_t2t_schedules():
    from t2t_repro.training.config import TrainerConfig
    from t2t_repro.training.loop.schedules import EvalThrottle, eval_due

    def cfg(schedule, **kw):
        return TrainerConfig("p", "h", "d", "o", schedule=schedule, local_eval_frequency=10, **kw)

    # Every local_eval_frequency steps, saved or not: after the loop call that reached one
    # (a multistep_adam update of 8 batches from step 16 to 24 passes step 20).
    for schedule in ("train_and_evaluate", "train_eval_and_decode"):
        assert eval_due(cfg(schedule), 19, 20, False, False)
        assert eval_due(cfg(schedule), 16, 24, False, False)
        assert not eval_due(cfg(schedule), 20, 25, True, True)
    # Estimator's train_and_evaluate: after a save, once the throttle passed.
    c = cfg("continuous_train_and_eval", eval_throttle_seconds=600)
    assert eval_due(c, 9, 10, True, True) and eval_due(c, 12, 13, True, True)
    assert not eval_due(c, 19, 20, True, False) and not eval_due(c, 19, 20, False, True)
    assert not eval_due(cfg("train"), 9, 10, True, True)
    # The throttle counts from an eval's start (Estimator's timer is updated before it
    # evaluates): after a 700 s eval that started at 0, 600 s have passed at 700.
    throttle = EvalThrottle(600)
    assert throttle.passed(0)
    throttle.started(0)
    assert not throttle.passed(599) and throttle.passed(700)


def test_train_eval_and_decode_trains_t2ts_rounds_from_where_it_starts():
    """T2TExperiment.train_eval_and_decode: ceil(train_steps / local_eval_frequency) rounds of
    Estimator.train(steps=local_eval_frequency), counted from the step the run starts at."""
    from t2t_repro.training.config import TrainerConfig
    from t2t_repro.training.loop.schedules import resume_hint, train_span, training_end
    from t2t_repro.training.run_setup import TrainingError, check_config

    def cfg(schedule, freq=300):
        return TrainerConfig(
            "translate_toy",
            "transformer_tiny",
            "d",
            "o",
            schedule=schedule,
            train_steps=1000,
            local_eval_frequency=freq,
        )

    assert train_span(cfg("train_eval_and_decode"), 0) == (1200, 0)  # 4 rounds of 300
    assert train_span(cfg("train_eval_and_decode"), 450) == (1650, 450)  # a rerun: 4 more
    for schedule in ("train", "train_and_evaluate", "continuous_train_and_eval"):
        assert train_span(cfg(schedule), 450) == (1000, 0)
    assert resume_hint(cfg("train"), 550) == "rerun the same command to resume."
    assert "with --train_steps=550 (under" in resume_hint(cfg("train_eval_and_decode"), 550)
    done = resume_hint(cfg("train_eval_and_decode"), 0)  # a stop right at the last round's end
    assert "--schedule=evaluate and --schedule=decode run them" in done
    assert training_end(cfg("train_eval_and_decode")) == (300, "--local_eval_frequency")
    assert training_end(cfg("train")) == (1000, "--train_steps")
    with pytest.raises(TrainingError, match="rounds of --local_eval_frequency steps"):
        check_config(cfg("train_eval_and_decode", freq=0))


def test_split_decode_names_are_t2ts():
    from t2t_repro.decoding.split_decoding import split_paths
    from t2t_repro.hparam import HParams

    dhp = HParams(beam_size=4, alpha=0.6)
    names = ("transformer", "transformer_base", "translate_ende_wmt32k")
    paths = split_paths("/train", "dev", "/out/newstest", names, dhp)
    stem = "/out/newstest.transformer.transformer_base.translate_ende_wmt32k.beam4.alpha0.6"
    assert (paths.decodes, paths.targets, paths.inputs) == (
        f"{stem}.decodes",
        f"{stem}.targets",
        f"{stem}.inputs",
    )
    # A name that already holds T2T's suffix is kept (T2T's _decode_filename).
    kept = split_paths("/train", "dev", "/out/x.beam4.alpha0.6.decodes", names, dhp)
    assert kept.decodes == "/out/x.beam4.alpha0.6.decodes" and kept.targets.endswith(".targets")
    default = split_paths("/train", "test", "", names, dhp)
    assert default == type(default)("/train/decode_test.txt", "/train/decode_test.ref.txt")


def test_keep_checkpoint_every_n_hours_reaches_the_checkpoint_manager(tmp_path):
    import keras
    import tensorflow as tf

    from t2t_repro.checkpoints.training import TrainingCheckpoint

    model = keras.layers.Dense(1)
    model.build((None, 1))
    ckpt = TrainingCheckpoint(str(tmp_path), model, tf.Module(), 3, keep_checkpoint_every_n_hours=2)
    ckpt.restore_latest()
    assert ckpt.manager._keep_checkpoint_every_n_hours == 2


def test_eval_timeout_minus_one_waits_for_checkpoints_forever(monkeypatch):
    """T2T's trainer_lib.next_checkpoint: timeout_mins=-1 is no timeout; other values are
    minutes (below 0: what is there is evaluated, then no wait)."""
    from types import SimpleNamespace

    import tensorflow as tf

    from t2t_repro.training.trainer import Trainer

    timeouts = []
    monkeypatch.setattr(
        tf.train, "checkpoints_iterator", lambda d, timeout: timeouts.append(timeout) or []
    )
    for minutes in (-1, 0, 3, -2):
        cfg = SimpleNamespace(eval_timeout_mins=minutes, output_dir="d", standalone_eval=False)
        fake = SimpleNamespace(cfg=cfg)
        assert Trainer.continuous_eval(fake) == {}
    assert timeouts == [None, 0, 180, -120]
    # T2T's continuous_eval skips a step-0 checkpoint ("Skipping evaluation at step 0"), and
    # evaluates every later one until none comes, past --train_steps too (it stopped there)
    restored = []
    monkeypatch.setattr(
        tf.train, "checkpoints_iterator", lambda d, timeout: ["d/ckpt-0", "d/ckpt-5", "d/ckpt-20"]
    )
    fake = SimpleNamespace(
        cfg=SimpleNamespace(eval_timeout_mins=0, output_dir="d", standalone_eval=False),
        ckpt=SimpleNamespace(
            checkpoint=SimpleNamespace(
                restore=lambda p: restored.append(p) or SimpleNamespace(expect_partial=int)
            )
        ),
        evaluate=lambda: {"step": int(restored[-1].rsplit("-", 1)[1])},
        step=20,
    )
    assert Trainer.continuous_eval(fake) == {"step": 20}
    assert restored == ["d/ckpt-5", "d/ckpt-20"]
    fake.cfg.standalone_eval = True  # t2t-eval's Estimator.evaluate(): step 0's too
    restored.clear()
    assert Trainer.continuous_eval(fake) == {"step": 20} and restored[0] == "d/ckpt-0"


def test_a_flags_prefix_is_not_the_flag():
    """absl matches no prefix of a flag's name (argparse did: --train_step set --train_steps)."""
    from t2t_repro.commands import trainer

    with pytest.raises(SystemExit):
        trainer.build_parser().parse_args(["--train_step=7"])
    assert trainer.build_parser().parse_args(["--train_steps=7"]).train_steps == 7


def test_translate_all_defaults_are_t2ts():
    """bin/t2t_translate_all.py's flags: --hparams_set names T2T's default set (a run's
    hparams.json wins over it here, as over any set)."""
    from t2t_repro.commands import translate_all

    args = translate_all.build_parser().parse_args([])
    assert args.hparams_set == "transformer_big_single_gpu"
    assert (args.translations_dir, args.min_steps, args.wait_minutes) == ("translations", 0, 0)
    assert args.model == "transformer" and (args.beam_size, args.alpha) == (4, 0.6)


def test_checkpoints_come_every_local_eval_frequency_or_t2ts_100_steps():
    """T2T's create_run_config: save_checkpoints_steps = max(iterations_per_loop (100),
    local_eval_frequency), none by steps with --save_checkpoints_secs; 0 no longer means a
    run without evaluations saves only at its end."""
    from types import SimpleNamespace

    from t2t_repro.training.loop.schedules import checkpoint_every

    def every(frequency, secs=0):
        return checkpoint_every(
            SimpleNamespace(local_eval_frequency=frequency, save_checkpoints_secs=secs)
        )

    assert (every(0), every(1000), every(250), every(1000, secs=600)) == (100, 1000, 250, 0)


def test_the_exporter_takes_the_trainers_flags_as_t2ts_export_ignores_them():
    """T2T's export.py reads none of the trainer's flags the decoder refuses but --use_tpu
    (they were refused): a trainer's command line exports."""
    parser = exporter.build_parser()
    t2t_flags.check_t2t_flags(parser, parser.parse_args(["--train_steps=9", "--worker_gpu=4"]))
    assert {f.name for f in t2t_flags.EXPORTER if f.refusal} == {"use_tpu", "export_as_tfhub"}


def test_decode_to_file_in_the_trainers_decode_hparams_wins_as_in_t2t():
    """T2T's create_experiment copies --decode_to_file/--decode_reference into the decode
    hparams only when those are empty; here the hparams' were dropped without a word."""
    from t2t_repro.commands import trainer

    parser = trainer.build_parser()
    args = parser.parse_args(
        ["--decode_hparams=beam_size=2,decode_to_file=/d/out,decode_reference=/d/ref"]
    )
    trainer.check_flags(parser, args)
    assert (args.decode_to_file, args.decode_reference) == ("/d/out", "/d/ref")
    args = parser.parse_args(["--decode_hparams=decode_to_file=/d/out", "--decode_to_file=/f"])
    trainer.check_flags(parser, args)
    assert args.decode_to_file == "/d/out"
    args = parser.parse_args(["--decode_to_file=/f"])
    trainer.check_flags(parser, args)
    assert args.decode_to_file == "/f"
