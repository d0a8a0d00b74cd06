"""``tensor2tensor.utils.metrics`` for a T2T usr_dir: the metric names a problem's
``eval_metrics`` returns (``utils/metrics.py``, ``Metrics``): the loss and accuracies are always
reported; ``APPROX_BLEU``, ``ACC_MULTILABEL_MATCH3``, ``EDIT_DISTANCE`` and the others of
``metrics/eval_metrics.py``'s ``ON_REQUEST`` are computed when listed, as T2T computes them;
``APPROX_BLEU`` also makes the trainer score dev BLEU of decodes (``t2t_compat/problem.py``)."""

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
    # T2T's other names: a problem's eval_metrics() naming one is refused in one line when the
    # trainer loads it (t2t_compat/problem_hparams.py), not an AttributeError in the usr_dir
    MASKED_NEG_LOG_PERPLEXITY = "masked_neg_log_perplexity"
    APPROX_SARI = "approx_sari_score"
    RMSE = "rmse"
    UNPADDED_MSE = "unpadded_mse"
    LOG_POISSON = "log_poisson"
    PEARSON = "pearson"
    R2 = "r_squared"
    PREFIX_ACCURACY = "prefix_accuracy"
    SET_PRECISION = "set_precision"
    SET_RECALL = "set_recall"
    SOFTMAX_CROSS_ENTROPY_ONE_HOT = "softmax_cross_entropy_one_hot"
    SIGMOID_ACCURACY_ONE_HOT = "sigmoid_accuracy_one_hot"
    SIGMOID_ACCURACY = "sigmoid_accuracy"
    SIGMOID_RECALL_ONE_HOT = "sigmoid_recall_one_hot"
    SIGMOID_PRECISION_ONE_HOT = "sigmoid_precision_one_hot"
    SIGMOID_CROSS_ENTROPY_ONE_HOT = "sigmoid_cross_entropy_one_hot"
    TWO_CLASS_ACCURACY = "two_class_accuracy"
    TWO_CLASS_LOG_LIKELIHOOD = "two_class_log_likelihood"
    ROC_AUC = "roc_auc"
    IMAGE_SUMMARY = "image_summary"
    DMOL_PERPLEXITY = "disc_mol_neg_log_perplexity"
    ABS_ERR = "mean_absolute_error"
    IMAGE_RMSE = "image_rmse"


# T2T's names this project does not provide: one line when called (refusals.py).
__getattr__ = refusals.module_getattr("tensor2tensor.utils.metrics")
