"""What a training run does at an evaluation: the teacher-forced eval of every worker, then the
chief's own work -- the problem's dev metric of real decodes (``dev_decodes.py``), attention
heat maps, and for the decode schedules the dev split's decodes (``schedules.SplitDecodes``).

On a cluster the chief's work runs in ``ChiefWork`` (the other workers wait for it outside
the collective timeout), and each part is a watched stage (``watchdog.py``).
"""

from __future__ import annotations

import tensorflow as tf

from t2t_repro.data.input_pipeline import EVAL, make_dataset
from t2t_repro.metrics.eval_metrics import t2t_tag, tag_name
from t2t_repro.training.loop import autoregressive_eval, evaluation, schedules
from t2t_repro.training.loop.attention_summary import AttentionSummary
from t2t_repro.training.loop.dev_decodes import make_dev_decodes
from t2t_repro.training.loop.run_errors import raise_data_stop
from t2t_repro.training.run_setup import TrainingError


class EvalRound:
    """``round()``: the eval results at the trainer's step; ``decode_split()``: the dev
    split's decodes (the chief writes them). ``trainer``: the ``Trainer`` it serves."""

    def __init__(self, trainer) -> None:
        self.trainer = trainer
        # The metrics the problem lists beyond those always reported (T2T's eval_metrics).
        self.metrics = trainer.problem.teacher_forced_metrics()
        self.eval_fn = evaluation.make_eval_fn(
            trainer.strategy, trainer.model, self.metrics, self._stop_at_eos()
        )
        self.split = "test" if trainer.cfg.eval_use_test_set else "dev"
        self._attention = None  # the first dev example's heat maps, made at the first eval
        self._dev_decodes = False  # made at the first evaluation (None: the problem has none)
        self._split_decodes = None  # the decode schedules' dev-split decoder

    def _stop_at_eos(self) -> bool:
        """Whether T2T's autoregressive evaluation (when the hparams ask for it) stops a
        one-row batch at EOS: the problem's ``stop_at_eos``, on a worker of one replica (T2T
        pads a batch to a multiple of its shards); after the one-line refusal of what it
        cannot run (``check_config`` refused the rest before any data was written)."""
        t = self.trainer
        if not t.hparams.get("eval_run_autoregressive", False) or t.cfg.schedule == "train":
            return True
        packed = bool(t.problem.packed_length or t.hparams.get("pack_dataset", False))
        multi_label = getattr(t.model, "multi_label", False)
        why = autoregressive_eval.refusal(t.hparams, packed, multi_label)
        if why:
            raise TrainingError(why + ".")
        one_replica = t.strategy.num_replicas_in_sync == t.cluster.workers
        return one_replica and t.problem.stop_at_eos(t.cfg.data_dir, t.hparams)

    def _dataset(self):
        t = self.trainer
        pattern = t.problem.filepattern(t.cfg.data_dir, self.split)
        return t.strategy.distribute_datasets_from_function(
            lambda ctx: make_dataset(
                pattern,
                EVAL,
                t.hparams,
                input_context=ctx,
                length_multiplier=t.problem.batch_size_multiplier,
                max_length=t.problem.max_length(t.hparams),
                read_example=t.problem.read_example_fn(EVAL, t.hparams),
            )
        )

    def evaluate(self, final: bool = False) -> dict:
        """One evaluation at the trainer's step (``final``: the one at the end of training,
        which T2T also writes elsewhere: ``schedules.eval_writers``)."""
        t = self.trainer
        try:
            with t.watchdog.stage("evaluation", waits_for_peers=True):
                results = evaluation.evaluate(
                    self.eval_fn,
                    self._dataset(),
                    t.cfg.eval_steps,
                    t.hparams.get("loss_multiplier", 1.0),
                )
        except (tf.errors.DataLossError, tf.errors.InvalidArgumentError) as e:
            raise_data_stop(e, t.problem, t.cfg.data_dir, self.split, t.ckpt.latest)
        if not results["eval_tokens"]:  # an empty split: nothing to report (evaluation.py)
            return evaluation.skipped(t.step, t.problem.filepattern(t.cfg.data_dir, self.split))
        dev_text = t.chief_work("dev decodes", lambda: self._chief_part(results)) or ""
        self._write_scalars(results, final)
        print(
            f"eval at step {t.step}: loss {results['loss']:.4f}, perplexity "
            f"{results['perplexity']:.3f}, accuracy {results['accuracy']:.4f}, "
            f"per-sequence {results['accuracy_per_sequence']:.4f}"
            + "".join(f", {m} {results[m]:.4f}" for m in self.metrics)
            + dev_text,
            flush=True,
        )
        return dict(results, step=t.step)

    def _write_scalars(self, results: dict, final: bool) -> None:
        t = self.trainer
        if results.get("eval_skipped"):  # an empty split: nothing recorded (evaluation.skipped)
            return
        overload = t.hparams.get("overload_eval_metric_name", "")
        scalars = {
            t2t_tag(k, tag_name(t.problem), overload): v
            for k, v in results.items()
            if k not in ("eval_tokens", "step")
        }
        for writer in schedules.eval_writers(t.cfg.schedule, final, t.cfg.standalone_eval):
            t.summaries.scalars(writer, scalars, t.step)

    def final(self, results: dict) -> dict:
        """At the end of training: an evaluation at the last step unless the last one was
        there; T2T's continuous_train_and_eval writes that one to eval_eval too."""
        if results.get("step") != self.trainer.step:
            return self.round(final=True)
        if self.trainer.cfg.schedule == "continuous_train_and_eval":
            self._write_scalars(results, final=True)
        return results

    def round(self, final: bool = False) -> dict:
        """The evaluation, and the dev split's decodes under train_eval_and_decode."""
        results = self.evaluate(final)
        if self.trainer.cfg.schedule == "train_eval_and_decode":
            results["decodes"] = self.decode_split()
        return results

    def _chief_part(self, results: dict) -> str:
        """The dev metric into ``results`` and the heat maps into TensorBoard (the chief's);
        the metric's log text."""
        t = self.trainer
        dev_text = self._dev_scores(results)
        if t.cfg.attention_images:
            if self._attention is None:
                self._attention = AttentionSummary(t.problem, t.cfg.data_dir, t.hparams)
            t.summaries.images("eval", self._attention.images(t.model), t.step)
        return dev_text

    def _dev_scores(self, results: dict) -> str:
        """The problem's dev metric of real decodes (``dev_decodes``) into ``results``; its
        log text ("" when the problem has no dev metric or ``eval_decode_examples`` is 0)."""
        t = self.trainer
        if self._dev_decodes is False:
            self._dev_decodes = make_dev_decodes(
                t.model,
                t.problem,
                t.cfg.data_dir,
                t.hparams,
                t.cfg.eval_decode_examples,
                random_seed=t.cfg.random_seed or 0,
            )
        if self._dev_decodes is None:
            return ""
        scores = self._dev_decodes()
        results.update(scores)
        return self._dev_decodes.metric.log_text(scores)

    def decode_split(self) -> str:
        """The dev split's decodes (``schedules.SplitDecodes``); the chief writes them and
        returns their path ("" on the other workers)."""
        return self.trainer.chief_work("split decodes", self._decode_split) or ""

    def _decode_split(self) -> str:
        t = self.trainer
        if self._split_decodes is None:
            self._split_decodes = schedules.SplitDecodes(t.model, t.problem, t.cfg)
        print(self._split_decodes(t.step), flush=True)
        return self._split_decodes.paths.decodes
