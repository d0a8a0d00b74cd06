"""T2T 1.15.7's datagen-time packing of examples (``tensor2tensor/data_generators/
generator_utils.py``: ``SequencePacker``, ``SequencePairPacker``, ``pack_examples``), the same
packed examples record for record, so packed shards are T2T's.

Several short examples are joined into one of at most ``packed_length`` ids (T2T's TPU
datasets, ``Text2TextProblem.packed_length``): ``spacing`` zeros between two joined sequences;
``<feature>_segmentation`` numbers each id's original example from 1 (0 on the spacing) and
``<feature>_position`` counts each id's place in its original sequence. Up to ``queue_size``
partly filled examples wait for more (first fit, oldest first); when a new one is needed and the
queue is full, the oldest leaves. A packed language-model example (no inputs) carries T2T's
placeholder ``inputs`` of ``[0]``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence


class SequencePacker:
    """One packed sequence being built (T2T's ``SequencePacker``): ids, segment numbers and
    positions, ``spacing`` zeros before each added sequence."""

    def __init__(self, first_sequence: Sequence[int], spacing: int = 2):
        self._spacing = spacing
        self._ids = list(first_sequence)
        self._segmentation = [1] * len(first_sequence)
        self._position = list(range(len(first_sequence)))

    def add(self, ids: Sequence[int]) -> None:
        gap = [0] * self._spacing
        # T2T numbers the next segment from the last id's (spacing included), 1 when empty
        segment = self._segmentation[-1] + 1 if self._segmentation else 1
        self._ids += gap + list(ids)
        self._segmentation += gap + [segment] * len(ids)
        self._position += gap + list(range(len(ids)))

    def can_fit(self, ids: Sequence[int], packed_length: int) -> bool:
        return len(self._ids) + self._spacing + len(ids) <= packed_length

    def to_dict(self) -> dict[str, list[int]]:
        """T2T's targets-only packed example, with its placeholder ``inputs`` of ``[0]``."""
        return {
            "inputs": [0],
            "targets": self._ids,
            "targets_segmentation": self._segmentation,
            "targets_position": self._position,
        }


class SequencePairPacker:
    """A packed (inputs, targets) pair (T2T's ``SequencePairPacker``): both sides must fit."""

    def __init__(self, first_sequence_pair: Sequence[Sequence[int]], spacing: int = 2):
        self._inputs = SequencePacker(first_sequence_pair[0], spacing)
        self._targets = SequencePacker(first_sequence_pair[1], spacing)

    def add(self, pair: Sequence[Sequence[int]]) -> None:
        self._inputs.add(pair[0])
        self._targets.add(pair[1])

    def can_fit(self, pair: Sequence[Sequence[int]], packed_length: int) -> bool:
        return self._inputs.can_fit(pair[0], packed_length) and self._targets.can_fit(
            pair[1], packed_length
        )

    def to_dict(self) -> dict[str, list[int]]:
        packed = self._targets.to_dict()
        side = self._inputs.to_dict()
        packed["inputs"] = side["targets"]
        packed["inputs_segmentation"] = side["targets_segmentation"]
        packed["inputs_position"] = side["targets_position"]
        return packed


def pack_examples(
    examples: Iterable[dict],
    has_inputs: bool,
    packed_length: int = 256,
    spacing: int = 2,
    queue_size: int = 10,
    chop_long_sequences: bool = False,
) -> Iterator[dict[str, list[int]]]:
    """T2T's ``generator_utils.pack_examples`` (its defaults too): the packed examples of
    ``examples`` (dicts of id lists) in T2T's order. A sequence longer than ``packed_length``
    is its own example, or with ``chop_long_sequences`` (targets only, as T2T asserts) cut into
    ``packed_length`` pieces first, its remainder packed as any sequence."""
    packer = SequencePairPacker if has_inputs else SequencePacker
    queue: list = []
    for example in examples:
        x = (example["inputs"], example["targets"]) if has_inputs else example["targets"]
        if chop_long_sequences and len(x) > packed_length:
            if has_inputs:  # T2T's assert: chopping is for targets only
                raise ValueError("pack_examples: chop_long_sequences needs has_inputs=False.")
            pieces = len(x) // packed_length
            for i in range(pieces):
                yield packer(x[packed_length * i : packed_length * (i + 1)], spacing).to_dict()
            x = x[packed_length * pieces :]
        for waiting in queue:
            if waiting.can_fit(x, packed_length):
                waiting.add(x)
                break
        else:
            if len(queue) == queue_size:
                yield queue.pop(0).to_dict()
            queue.append(packer(x, spacing))
    for waiting in queue:
        yield waiting.to_dict()
