"""Parallel text from a tensorflow-datasets builder (e.g. ``wmt14_translate/de-en``).

tfds downloads and prepares the corpus itself the first time (into ``$TFDS_DATA_DIR`` or
``~/tensorflow_datasets``); later runs read the prepared copy, offline too. With
``T2T_REPRO_OFFLINE=1`` nothing is downloaded: only an already prepared copy is used.
Examples are ``{lang: text}`` dicts (tfds ``Translation`` features); the split names are tfds's
(``train``, ``validation``, ``test``).

Offline tests use ``tfds.testing.mock_data(num_examples=N, policy=MockPolicy.USE_CODE)``: in
tfds 4.9.10 it needs neither network nor metadata files (the wheel ships none for the WMT
builders; ``AUTO`` falls back to ``USE_CODE`` for the same reason). ``download_and_prepare`` is
a no-op and every split yields the same N random examples built from the builder's features
(strings of the letters a-j and spaces for each language); ``info.splits`` is unknown, so the
pair count (and the progress ETA) is too.
"""

from __future__ import annotations

from collections.abc import Iterator

from t2t_repro.data import download
from t2t_repro.data.pair_sources import PairSource
from t2t_repro.data.text_files import DataError, ReadStats, decode_utf8

TFDS_SPLITS = {"train": "train", "dev": "validation", "test": "test"}


class TfdsPairs(PairSource):
    """One split of a tfds translation builder, as (source, target) text pairs."""

    def __init__(
        self,
        builder_name: str,
        split: str,
        source_key: str,
        target_key: str,
        data_dir: str | None = None,
        vocab_files: int = 1,
        help_text: str = "",
    ):
        self.builder_name, self.split = builder_name, TFDS_SPLITS.get(split, split)
        self.source_key, self.target_key = source_key, target_key
        self.data_dir, self.vocab_files, self.help_text = data_dir, vocab_files, help_text
        self.description = f"tfds {builder_name} split {self.split} ({source_key} -> {target_key})"
        self._builder_obj = None

    def _fail(self, what: str, error: Exception | None = None) -> DataError:
        cause = f" ({type(error).__name__}: {error})" if error is not None else ""
        return DataError(f"{self.description}: {what}{cause}. {self.help_text}".strip())

    def _builder(self):
        if self._builder_obj is not None:
            return self._builder_obj
        try:
            import tensorflow_datasets as tfds
        except ImportError as e:
            raise self._fail(
                "tensorflow-datasets is not installed (pip install tensorflow-datasets)", e
            ) from None
        try:
            builder = tfds.builder(self.builder_name, data_dir=self.data_dir)
        except Exception as e:  # unknown builder or config
            raise self._fail("tfds could not create the builder", e) from None
        try:
            prepared = builder.is_prepared()
        except Exception:
            prepared = False
        if not prepared:
            if download.offline():
                raise self._fail(f"not prepared in {builder.data_dir} and T2T_REPRO_OFFLINE is set")
            try:
                builder.download_and_prepare()
            except Exception as e:  # network, disk, checksum: all mean "no data from tfds"
                raise self._fail("tfds download_and_prepare failed", e) from None
        self._builder_obj = builder
        return builder

    def check(self) -> int | None:
        builder = self._builder()
        try:
            n = builder.info.splits[self.split].num_examples
        except Exception:  # unknown in mocked or partial metadata
            return None
        return int(n) if n else None

    def pairs(self, stats: ReadStats) -> Iterator[tuple[str, str]]:
        import tensorflow_datasets as tfds

        builder = self._builder()
        try:
            dataset = builder.as_dataset(split=self.split, shuffle_files=False)
        except Exception as e:
            raise self._fail("tfds could not read the split", e) from None
        for example in tfds.as_numpy(dataset):
            yield (
                decode_utf8(example[self.source_key], stats).strip(),
                decode_utf8(example[self.target_key], stats).strip(),
            )

    def vocab_lines(self, byte_budget: float) -> Iterator[str]:
        """About ``byte_budget * vocab_files`` bytes per language from the start of the split.

        T2T samples ~1 MB from each raw file (``vocab_files`` = corpora in the split); a prepared
        tfds split no longer has files but is shuffled, so its first lines are a fair sample of
        the same size.
        """
        budgets = [byte_budget * self.vocab_files] * 2
        for pair in self.pairs(ReadStats()):
            for side in (0, 1):
                if budgets[side] > 0 and pair[side]:
                    budgets[side] -= len(pair[side])
                    yield pair[side]
            if budgets[0] <= 0 and budgets[1] <= 0:
                return
