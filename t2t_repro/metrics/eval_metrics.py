"""T2T's names of the teacher-forced eval metrics this project computes
(``tensor2tensor/utils/metrics.py``, ``Metrics``), read by the trainer's evaluation
(``training/loop/evaluation.py``) and by the problems that name them in ``eval_metrics``."""

from __future__ import annotations

# Reported by every evaluation (with the loss and perplexity).
ALWAYS = ("accuracy", "accuracy_per_sequence", "neg_log_perplexity")
# Computed only for a problem that lists them: T2T's padded_accuracy_top5 (the target among
# the 5 highest logits, over non-padding tokens), its ROUGE-2 F and ROUGE-L F of the argmax ids
# (metrics/rouge.py) and its approximate BLEU of them.
ACCURACY_TOP5 = "accuracy_top5"
ROUGE_2_F = "rouge_2_fscore"
ROUGE_L_F = "rouge_L_fscore"
# T2T's bleu_score: bleu_hook's compute_bleu of each batch's argmax id rows against its target
# rows, padding included (metrics/bleu.py, approx_bleu); not the dev BLEU of real decodes.
APPROX_BLEU = "approx_bleu_score"
# T2T's multilabel_accuracy_match3 (metrics/multi_label.py): min(n / 3, 1) an example, n the
# times the argmax is among its labels.
ACC_MULTILABEL_MATCH3 = "accuracy_multilabel_match3"
# T2T's sequence_edit_distance: the Levenshtein distance of the argmax ids to the targets (PAD
# ids left out of both) over the reference tokens.
EDIT_DISTANCE = "edit_distance"
ON_REQUEST = (
    ACCURACY_TOP5,
    ROUGE_2_F,
    ROUGE_L_F,
    APPROX_BLEU,
    ACC_MULTILABEL_MATCH3,
    EDIT_DISTANCE,
)
# The metrics of a batch's argmax id rows, one value a batch averaged over the batches.
ROW_METRICS = (ROUGE_2_F, ROUGE_L_F, APPROX_BLEU)


# The teacher-forced metrics of T2T's utils/metrics.py: tagged in TensorBoard as T2T tags them.
T2T_TAGGED = (*ALWAYS, *ON_REQUEST)


def t2t_tag(metric: str, problem_name: str, overload: str = "") -> str:
    """The TensorBoard tag of an eval figure: T2T's ``metrics-<problem>/targets/<metric>``
    for its metrics (``utils/metrics.py``, ``create_evaluation_metrics``; the
    ``overload_eval_metric_name`` hparam in place of the problem's name when set); the loss
    (Estimator's ``loss``) and this project's own figures (perplexity, dev BLEU...) as named."""
    if metric not in T2T_TAGGED:
        return metric
    return f"metrics-{overload or problem_name}/targets/{metric}"


def tag_name(problem) -> str:
    """The problem's name as T2T shows it, in its eval tags (``create_evaluation_metrics``)
    and in this project's lines about it: its ``name``, with "_rev" for T2T's ``<name>_rev``
    (``was_reversed``: a usr_dir problem made from that name, whose ``name`` is its base's)."""
    return problem.name + ("_rev" if getattr(problem, "was_reversed", False) else "")


def on_request(names) -> tuple[str, ...]:
    """The metrics of ``ON_REQUEST`` among ``names`` (a problem's eval_metrics), in
    ``ON_REQUEST``'s order."""
    return tuple(m for m in ON_REQUEST if m in set(names))
