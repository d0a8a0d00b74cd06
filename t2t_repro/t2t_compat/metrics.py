"""``tensor2tensor.utils.metrics`` for a T2T usr_dir: the metric names a problem's
``eval_metrics`` returns (``utils/metrics.py``, ``Metrics``). Here they only choose the dev
metric: ``APPROX_BLEU`` makes the trainer score dev BLEU (``t2t_compat/problem.py``); the loss
and accuracies are always reported."""


class Metrics:
    ACC = "accuracy"
    ACC_TOP5 = "accuracy_top5"
    ACC_PER_SEQ = "accuracy_per_sequence"
    NEG_LOG_PERPLEXITY = "neg_log_perplexity"
    APPROX_BLEU = "approx_bleu_score"
    ROUGE_2_F = "rouge_2_fscore"
    ROUGE_L_F = "rouge_L_fscore"
    EDIT_DISTANCE = "edit_distance"
    WORD_ERROR_RATE = "word_error_rate"
