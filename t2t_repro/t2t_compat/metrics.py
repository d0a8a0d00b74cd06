"""``tensor2tensor.utils.metrics`` for a T2T usr_dir: the metric names a problem's
``eval_metrics`` returns (``utils/metrics.py``, ``Metrics``). Here they only choose the dev
metric: ``APPROX_BLEU`` makes the trainer score dev BLEU (``t2t_compat/problem.py``); the loss
and accuracies are always reported; ``ACC_MULTILABEL_MATCH3`` and the others of
``metrics/eval_metrics.py``'s ``ON_REQUEST`` are computed when listed."""

from t2t_repro.t2t_compat import refusals


class Metrics:
    ACC = "accuracy"
    ACC_TOP5 = "accuracy_top5"
    ACC_PER_SEQ = "accuracy_per_sequence"
    ACC_MULTILABEL_MATCH3 = "accuracy_multilabel_match3"
    NEG_LOG_PERPLEXITY = "neg_log_perplexity"
    APPROX_BLEU = "approx_bleu_score"
    ROUGE_2_F = "rouge_2_fscore"
    ROUGE_L_F = "rouge_L_fscore"
    EDIT_DISTANCE = "edit_distance"
    WORD_ERROR_RATE = "word_error_rate"


# T2T's names this project does not provide: one line when called (refusals.py).
__getattr__ = refusals.module_getattr("tensor2tensor.utils.metrics")
