"""Nested structures (lists, tuples, namedtuples, dicts) flattened and rebuilt, like tf.nest."""

__all__ = ["flatten", "pack_sequence_as", "map_structure", "is_nested"]


def is_nested(x):
    return isinstance(x, (list, tuple, dict))


def _items(x):
    if isinstance(x, dict):
        return [x[k] for k in sorted(x, key=_sort_key)]
    return list(x)


def _sort_key(k):
    return (str(type(k)), k) if not isinstance(k, (int, float, str)) else (type(k).__name__, k)


def flatten(structure):
    """The leaves of `structure` in order (dicts by sorted key)."""
    if not is_nested(structure):
        return [structure]
    out = []
    for item in _items(structure):
        out.extend(flatten(item))
    return out


def pack_sequence_as(structure, flat):
    """Rebuilds `structure` with the leaves taken in order from `flat`."""
    flat = list(flat)
    result, used = _pack(structure, flat, 0)
    if used != len(flat):
        raise ValueError(f"structure has {used} leaves but {len(flat)} values were given")
    return result


def _pack(structure, flat, i):
    if not is_nested(structure):
        return flat[i], i + 1
    if isinstance(structure, dict):
        keys = sorted(structure, key=_sort_key)
        values = {}
        for k in keys:
            values[k], i = _pack(structure[k], flat, i)
        return type(structure)((k, values[k]) for k in structure), i
    items = []
    for s in structure:
        v, i = _pack(s, flat, i)
        items.append(v)
    if isinstance(structure, tuple) and hasattr(structure, "_fields"):
        return type(structure)(*items), i
    return type(structure)(items), i


def map_structure(fn, *structures):
    flats = [flatten(s) for s in structures]
    return pack_sequence_as(structures[0], [fn(*xs) for xs in zip(*flats)])
