"""Row scatter kernels: table[rows[i]] (op)= updates[i], in index order, in place.

Used by the scatter updates of variables and by tensor_scatter_nd_*: the caller validates the rows
first (so a bad index changes nothing) and passes a C-contiguous 2-D view of the target. Duplicates
are applied one after another (so "update" keeps the last one and add/sub/mul/div/min/max apply
every duplicate), never through a temporary of the table's size.
"""
import numpy as np

from segflow.kernels._common import HAVE_NUMBA, njit

__all__ = ["scatter_rows", "HOWS"]

HOWS = {"update": 0, "add": 1, "sub": 2, "mul": 3, "div": 4, "min": 5, "max": 6}

_UFUNCS = {1: np.add, 2: np.subtract, 3: np.multiply, 5: np.minimum, 6: np.maximum}


@njit(cache=True, nogil=True, error_model="numpy")
def _scatter_rows_nb(table, rows, updates, how):
    d = table.shape[1]
    for i in range(rows.shape[0]):
        r = rows[i]
        if how == 0:
            for j in range(d):
                table[r, j] = updates[i, j]
        elif how == 1:
            for j in range(d):
                table[r, j] += updates[i, j]
        elif how == 2:
            for j in range(d):
                table[r, j] -= updates[i, j]
        elif how == 3:
            for j in range(d):
                table[r, j] *= updates[i, j]
        elif how == 4:
            for j in range(d):
                table[r, j] = table[r, j] / updates[i, j]
        elif how == 5:
            for j in range(d):
                if updates[i, j] < table[r, j]:
                    table[r, j] = updates[i, j]
        else:
            for j in range(d):
                if updates[i, j] > table[r, j]:
                    table[r, j] = updates[i, j]


@njit(cache=True, nogil=True)
def _scatter_rows_int_div_nb(table, rows, updates):
    d = table.shape[1]
    for i in range(rows.shape[0]):
        r = rows[i]
        for j in range(d):
            table[r, j] = table[r, j] // updates[i, j]


def _numpy_scatter(table, rows, updates, how):
    if how == 0:
        rev = rows[::-1]
        uniq, first = np.unique(rev, return_index=True)    # the last writer of each row
        table[uniq] = updates[rows.size - 1 - first]
    elif how == 4:
        (np.floor_divide if table.dtype.kind in "iu" else np.true_divide).at(table, rows, updates)
    else:
        _UFUNCS[how].at(table, rows, updates)


def scatter_rows(table, rows, updates, how):
    """In place: table[rows[i]] (how)= updates[i] for each i in order.

    table: 2-D, C-contiguous, writable; rows: 1-D ints, all in range; updates: [len(rows), table.shape[1]]
    of table's dtype; how: a key of HOWS.
    """
    code = HOWS[how]
    if rows.size == 0:
        return
    rows = np.ascontiguousarray(rows, dtype=np.int64)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if HAVE_NUMBA and table.dtype.kind in "fiu" and table.dtype.itemsize >= 4 and table.dtype.name != "bfloat16":
            if code == 4 and table.dtype.kind in "iu":
                _scatter_rows_int_div_nb(table, rows, updates)
            else:
                _scatter_rows_nb(table, rows, updates, code)
        else:
            _numpy_scatter(table, rows, updates, code)
