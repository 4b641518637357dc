"""LOW LEVEL numba parser of LETOR / SVMlight ranking text: ``label [qid:N] idx:val ... [# comment]``."""

import numpy as np
from numba import njit

# status codes returned with the 1-based line number and the byte span of the bad token
OK, BAD_LABEL, BAD_TOKEN, BAD_INDEX, BAD_VALUE, NULL_VALUE, BAD_QID, UNSORTED, MIXED_QID, MORE_SLOW, QID_RANGE = range(11)

#: the largest qid that fits int64: a larger one would wrap around and merge with a small qid
_QID_MAX = 9223372036854775807
#: the largest feature index (columns are int32)
MAX_INDEX = 2000000000

_POW10 = np.array([10.0 ** i for i in range(23)])


@njit(cache=True)
def _is_space(c):
    return c == 32 or c == 9 or c == 13 or c == 11 or c == 12


@njit(cache=True)
def parse_number(buf, a, b, pow10):
    """Parse ``buf[a:b]`` as a decimal float.

    Returns ``(value, status)``: status 0 = parsed exactly (a mantissa of at most 15 digits and
    a decimal exponent of at most 22 make ``m / 10**e`` or ``m * 10**e`` one correctly rounded
    IEEE operation, as ``strtod``), 1 = valid-looking but must be parsed by Python's ``float``
    (long mantissa, large exponent, nan/inf words), 2 = not a number.
    """
    if a >= b:
        return 0.0, 2
    i = a
    neg = False
    if buf[i] == 45 or buf[i] == 43:  # '-' '+'
        neg = buf[i] == 45
        i += 1
    mant = 0
    digits = 0
    frac = 0
    seen_digit = False
    while i < b and 48 <= buf[i] <= 57:
        if mant != 0 or buf[i] != 48:
            digits += 1
        mant = mant * 10 + (buf[i] - 48) if digits <= 18 else mant
        if digits > 18:
            frac -= 1
        seen_digit = True
        i += 1
    if i < b and buf[i] == 46:  # '.'
        i += 1
        while i < b and 48 <= buf[i] <= 57:
            if mant != 0 or buf[i] != 48:
                digits += 1
            if digits <= 18:
                mant = mant * 10 + (buf[i] - 48)
                frac += 1
            seen_digit = True
            i += 1
    if not seen_digit:
        # letters such as nan / inf: leave the decision to Python's float()
        c = buf[i] | 32 if i < b else 0
        if c == 110 or c == 105:  # 'n' 'i'
            return 0.0, 1
        return 0.0, 2
    exp = 0
    if i < b and (buf[i] == 101 or buf[i] == 69):  # 'e' 'E'
        i += 1
        eneg = False
        if i < b and (buf[i] == 45 or buf[i] == 43):
            eneg = buf[i] == 45
            i += 1
        if i >= b or not (48 <= buf[i] <= 57):
            return 0.0, 2
        while i < b and 48 <= buf[i] <= 57:
            exp = exp * 10 + (buf[i] - 48)
            if exp > 100000:
                exp = 100000
            i += 1
        if eneg:
            exp = -exp
    if i != b:
        return 0.0, 2
    e10 = exp - frac
    if digits > 15 or e10 > 22 or e10 < -22:
        return 0.0, 1
    v = float(mant)
    if e10 >= 0:
        v = v * pow10[e10]
    else:
        v = v / pow10[-e10]
    return (-v if neg else v), 0


@njit(cache=True)
def _note_slow(slow_tok, n_slow, kind, target, a, b):
    """Record token ``buf[a:b]`` (kind 0: label of row ``target``, 1: value ``target``) for
    Python's ``float()``; False when the table is full."""
    if n_slow >= slow_tok.shape[0]:
        return False
    slow_tok[n_slow, 0] = kind
    slow_tok[n_slow, 1] = target
    slow_tok[n_slow, 2] = a
    slow_tok[n_slow, 3] = b
    return True


@njit(cache=True)
def count_upper_bounds(buf):
    """(number of lines, number of ':' characters) - sizes for the output arrays."""
    lines = 0
    colons = 0
    n = buf.shape[0]
    for i in range(n):
        c = buf[i]
        if c == 10:
            lines += 1
        elif c == 58:
            colons += 1
    if n > 0 and buf[n - 1] != 10:
        lines += 1
    return lines, colons


@njit(cache=True)
def parse_letor(buf, null_as_nan, labels, qids, has_qid, line_no, comment_span,
                feat_row, feat_col, feat_val, slow_tok, pow10):
    """Parse every line; return ``(status, line, tok_a, tok_b, n_rows, n_feats, n_slow)``.

    Rows are non-empty, non-comment lines. ``slow_tok`` collects byte spans of numbers
    Python must parse (``status`` 1 of :func:`parse_number`): rows of ``slow_tok`` are
    ``(kind, index, a, b)`` with kind 0 = label, 1 = feature value.
    """
    n = buf.shape[0]
    pos = 0
    line = 0
    row = 0
    nf = 0
    n_slow = 0
    qid_mode = -1  # -1 unknown, 0 no qid, 1 qid
    while pos < n:
        line += 1
        end = pos
        while end < n and buf[end] != 10:
            end += 1
        # comment
        cpos = pos
        while cpos < end and buf[cpos] != 35:  # '#'
            cpos += 1
        i = pos
        while i < cpos and _is_space(buf[i]):
            i += 1
        if i >= cpos:
            pos = end + 1
            continue
        # label
        a = i
        while i < cpos and not _is_space(buf[i]):
            i += 1
        v, st = parse_number(buf, a, i, pow10)
        if st == 2:
            return BAD_LABEL, line, a, i, row, nf, n_slow
        if st == 1:
            if not _note_slow(slow_tok, n_slow, 0, row, a, i):
                return MORE_SLOW, line, a, i, row, nf, n_slow
            n_slow += 1
        labels[row] = v
        line_no[row] = line
        comment_span[row, 0] = cpos
        comment_span[row, 1] = end
        this_qid = 0
        last_idx = 0
        while True:
            while i < cpos and _is_space(buf[i]):
                i += 1
            if i >= cpos:
                break
            a = i
            colon = -1
            while i < cpos and not _is_space(buf[i]):
                if buf[i] == 58 and colon < 0:
                    colon = i
                i += 1
            if colon < 0:
                return BAD_TOKEN, line, a, i, row, nf, n_slow
            # qid:
            if colon - a == 3 and buf[a] == 113 and buf[a + 1] == 105 and buf[a + 2] == 100:
                if last_idx > 0 or this_qid == 1:
                    return BAD_TOKEN, line, a, i, row, nf, n_slow
                qv = 0
                j = colon + 1
                qneg = False
                if j < i and buf[j] == 45:
                    qneg = True
                    j += 1
                if j >= i:
                    return BAD_QID, line, a, i, row, nf, n_slow
                while j < i:
                    if not (48 <= buf[j] <= 57):
                        return BAD_QID, line, a, i, row, nf, n_slow
                    d = buf[j] - 48
                    if qv > (_QID_MAX - d) // 10:
                        return QID_RANGE, line, a, i, row, nf, n_slow
                    qv = qv * 10 + d
                    j += 1
                qids[row] = -qv if qneg else qv
                this_qid = 1
                continue
            # feature index
            idx = 0
            j = a
            if j >= colon:
                return BAD_INDEX, line, a, i, row, nf, n_slow
            while j < colon:
                c = buf[j]
                if not (48 <= c <= 57):
                    return BAD_INDEX, line, a, i, row, nf, n_slow
                idx = idx * 10 + (c - 48)
                if idx > MAX_INDEX:
                    return BAD_INDEX, line, a, i, row, nf, n_slow
                j += 1
            if idx < 1:
                return BAD_INDEX, line, a, i, row, nf, n_slow
            if idx <= last_idx:
                return UNSORTED, line, a, i, row, nf, n_slow
            last_idx = idx
            va = colon + 1
            if i - va == 4 and (buf[va] | 32) == 110 and (buf[va + 1] | 32) == 117 \
                    and (buf[va + 2] | 32) == 108 and (buf[va + 3] | 32) == 108:  # NULL
                if not null_as_nan:
                    return NULL_VALUE, line, a, i, row, nf, n_slow
                fv = np.nan
            else:
                fv, st = parse_number(buf, va, i, pow10)
                if st == 2:
                    return BAD_VALUE, line, a, i, row, nf, n_slow
                if st == 1:
                    if not _note_slow(slow_tok, n_slow, 1, nf, va, i):
                        return MORE_SLOW, line, a, i, row, nf, n_slow
                    n_slow += 1
            feat_row[nf] = row
            feat_col[nf] = idx - 1
            feat_val[nf] = fv
            nf += 1
        if qid_mode == -1:
            qid_mode = this_qid
        elif qid_mode != this_qid:
            return MIXED_QID, line, pos, cpos, row, nf, n_slow
        has_qid[0] = qid_mode
        row += 1
        pos = end + 1
    return OK, line, 0, 0, row, nf, n_slow
