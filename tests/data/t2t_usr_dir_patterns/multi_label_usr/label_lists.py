"""A multi-label base problem, written for the tests against T2T 1.15's API only and shaped like
the one of the public Jigsaw toxic-comment usr_dir (#59): a Text2TextProblem (not
Text2ClassProblem) whose samples carry a list of label ids, a MULTI_LABEL target read as a
VarLenFeature, and feature_encoders giving the targets as a list of one-name ClassLabelEncoders
(which T2T's decoder cannot call decode on)."""

import tensorflow as tf
from tensor2tensor.data_generators import problem, text_encoder, text_problems
from tensor2tensor.layers import modalities


class LabelListProblem(text_problems.Text2TextProblem):
    @property
    def num_classes(self):
        raise NotImplementedError()

    def class_labels(self, data_dir):
        return [f"ID_{i}" for i in range(self.num_classes)]

    def generate_text_for_vocab(self, data_dir, tmp_dir):
        for sample in self.generate_samples(data_dir, tmp_dir, problem.DatasetSplit.TRAIN):
            yield sample["inputs"]

    def generate_encoded_samples(self, data_dir, tmp_dir, dataset_split):
        encoder = self.get_or_create_vocab(data_dir, tmp_dir)
        for sample in self.generate_samples(data_dir, tmp_dir, dataset_split):
            ids = encoder.encode(sample["inputs"]) + [text_encoder.EOS_ID]
            yield {"inputs": ids, "targets": sample["labels"]}

    def feature_encoders(self, data_dir):
        names = self.class_labels(data_dir)
        return {
            "inputs": self.get_or_create_vocab(data_dir, None, force_get=True),
            "targets": [text_encoder.ClassLabelEncoder(name) for name in names],
        }

    def hparams(self, defaults, unused_model_hparams):
        defaults.modality = {
            "inputs": modalities.ModalityType.SYMBOL,
            "targets": modalities.ModalityType.MULTI_LABEL,
        }
        defaults.vocab_size = {
            "inputs": self._encoders["inputs"].vocab_size,
            "targets": self.num_classes,
        }

    def example_reading_spec(self):
        fields = {"inputs": tf.VarLenFeature(tf.int64), "targets": tf.VarLenFeature(tf.int64)}
        return fields, None
