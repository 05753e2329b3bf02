"""Row scatter kernels: table[rows[i]] (op)= updates[i], in index order, in place.

Used by the scatter updates of variables and by tensor_scatter_nd_*: the caller validates the rows
first (so a bad index changes nothing) and passes a C-contiguous 2-D view of the target. Duplicates
are applied one after another (so "update" keeps the last one and add/sub/mul/div/min/max apply
every duplicate), never through a temporary of the table's size.

Every dtype follows the compiled loop's rules, as TensorFlow does: integer "div" rounds toward zero
(-7 / 2 = -3) and MIN / -1 wraps to MIN; "min"/"max" replace a value only where the update compares
< (>), so a NaN update never wins and a NaN already in the table stays.
"""
import numpy as np

from segflow.kernels._common import HAVE_NUMBA, ROW_AHEAD, njit, prefetch_lines, row_lines, ufunc_at_rows

__all__ = ["scatter_rows", "HOWS"]

HOWS = {"update": 0, "add": 1, "sub": 2, "mul": 3, "div": 4, "min": 5, "max": 6}

_UFUNCS = {1: np.add, 2: np.subtract, 3: np.multiply, 5: np.minimum, 6: np.maximum}


@njit(cache=True, nogil=True, error_model="numpy")
def _scatter_rows_nb(table, rows, updates, how, ahead):
    """With `ahead`, the table row ROW_AHEAD ahead is prefetched (its first lines, as the gather's).
    1e5 random rows of a 1e6-row float32 table, against the loop without: add 0.45-0.56x and max
    0.25-0.50x for rows of 1-64 values, update 0.84-0.89x for rows of 16-64; but update of rows of
    one cache line or less, where nothing waits on the line, took 1.2x, so those go without."""
    n = rows.shape[0]
    d = table.shape[1]
    flat = table.reshape(-1)
    lines = row_lines(d * table.itemsize)
    for i in range(n):
        if ahead and i + ROW_AHEAD < n:
            prefetch_lines(flat, rows[i + ROW_AHEAD] * d, lines)
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
    # unsigned: floor division is division toward zero. (Not merged into the signed loop below: there
    # Numba unifies uint64 with the int literal -1 as float64, which loses the low bits of big values.)
    d = table.shape[1]
    for i in range(rows.shape[0]):
        r = rows[i]
        for j in range(d):
            table[r, j] = table[r, j] // updates[i, j]


@njit(cache=True, nogil=True)
def _scatter_rows_signed_div_nb(table, rows, updates):
    # C's division: the quotient rounded toward zero; MIN / -1 wraps to MIN (two's complement)
    d = table.shape[1]
    for i in range(rows.shape[0]):
        r = rows[i]
        for j in range(d):
            a = table[r, j]
            b = updates[i, j]
            if b == -1:
                table[r, j] = -a
            else:
                q = a // b
                if a % b != 0 and (a < 0) != (b < 0):
                    q += 1
                table[r, j] = q


def _trunc_divide(a, b):
    """a / b rounded toward zero for integer arrays, MIN / -1 wrapping to MIN (C's semantics)."""
    if a.dtype.kind == "u":
        return a // b
    minus_one = b == -1
    safe = np.where(minus_one, 1, b).astype(b.dtype, copy=False)
    q = a // safe
    q += ((a % safe != 0) & ((a < 0) != (safe < 0))).astype(q.dtype)
    return np.where(minus_one, np.negative(a), q).astype(a.dtype, copy=False)


def _numpy_scatter(table, rows, updates, how):
    if how == 0:
        rev = rows[::-1]
        uniq, first = np.unique(rev, return_index=True)    # the last writer of each row
        table[uniq] = updates[rows.size - 1 - first]
    elif how == 4 and table.dtype.kind in "iu":
        for i in range(rows.size):                          # duplicates one after another
            table[rows[i]] = _trunc_divide(table[rows[i]], updates[i])
    elif how == 4:
        np.true_divide.at(table, rows, updates)
    elif how in (5, 6) and table.dtype.kind not in "iu":
        # Like the compiled loop: an update replaces the value only where it compares < (>), so a
        # NaN update never wins and a NaN already there stays (np.minimum.at would let a NaN win).
        # Applied in rounds in which every row occurs once, so duplicates go one after another.
        order = np.argsort(rows, kind="stable")
        sorted_rows = rows[order]
        starts = np.flatnonzero(np.r_[True, sorted_rows[1:] != sorted_rows[:-1]])
        rank = np.arange(rows.size) - np.repeat(starts, np.diff(np.r_[starts, rows.size]))
        occurrence = np.empty(rows.size, np.int64)
        occurrence[order] = rank
        for k in range(int(occurrence.max()) + 1):
            pick = np.flatnonzero(occurrence == k)
            r = rows[pick]
            cur = table[r]
            upd = updates[pick]
            table[r] = np.where(upd < cur if how == 5 else upd > cur, upd, cur)
    else:
        ufunc_at_rows(_UFUNCS[how], table, rows, updates)


def _compiled_min_max_small_float(table, rows, updates, code):
    """min/max of float16/bfloat16 through the compiled float32 loop on the touched rows only
    (widening to float32 and back is exact), so every float dtype follows one rule."""
    uniq, inverse = np.unique(rows, return_inverse=True)
    sub = table[uniq].astype(np.float32)
    _scatter_rows_nb(sub, np.ascontiguousarray(inverse.reshape(-1), dtype=np.int64),
                     np.ascontiguousarray(updates, dtype=np.float32), code, True)
    table[uniq] = sub.astype(table.dtype)


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
        kind = table.dtype.kind
        if HAVE_NUMBA and code == 4 and kind in "iu":
            if kind == "i":
                _scatter_rows_signed_div_nb(table, rows, updates)
            else:
                _scatter_rows_int_div_nb(table, rows, updates)
        elif HAVE_NUMBA and kind in "fiu" and table.dtype.itemsize >= 4 and table.dtype.name != "bfloat16":
            _scatter_rows_nb(table, rows, updates, code, code != 0 or table.shape[1] * table.itemsize > 64)
        elif HAVE_NUMBA and code in (5, 6) and (kind == "f" or table.dtype.name == "bfloat16"):
            _compiled_min_max_small_float(table, rows, updates, code)
        else:
            _numpy_scatter(table, rows, updates, code)
