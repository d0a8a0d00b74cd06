"""Splitting a decoding cache (nested dicts) by key name, and joining it back: the search
keeps some entries apart from the rest (constants outside the loop, in-place position buffers
beside it) and hands the model the whole cache at every step."""

from __future__ import annotations


def split_nested(cache: dict, constant_keys) -> tuple[dict, dict]:
    """(changing, constant): ``cache``'s nested dicts split by key name, structure kept."""
    changing, constant = {}, {}
    for key, value in cache.items():
        if key in constant_keys:
            constant[key] = value
        elif isinstance(value, dict):
            changing[key], inner = split_nested(value, constant_keys)
            if inner:
                constant[key] = inner
        else:
            changing[key] = value
    return changing, constant


def join_nested(changing: dict, constant: dict) -> dict:
    """The inverse of ``split_nested``."""
    joined = dict(changing)
    for key, value in constant.items():
        joined[key] = join_nested(joined[key], value) if key in joined else value
    return joined
