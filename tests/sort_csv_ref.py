#!/usr/bin/env python3
"""sort_csv_ref.py - reference CSV sort for tests/test_sort_text.sh.

  sort_csv_ref.py IN DELIM HEADER(0|1) KEY... > OUT

KEY is COL[:text|num][:asc|desc] as for `pems-run sort --format csv
--key`.  Rows are framed by quote parity (RFC 4180), parsed with the csv
module, sorted stably by the keys (text: bytes of the unquoted value;
num: strtold-like prefix, non-numbers first, then NaN, then numbers) and
written as their original bytes, the header first.
"""
import csv, functools, io, re, sys

NUM = re.compile(rb'^[ \t\n\v\f\r]*[-+]?(inf(inity)?|nan|(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?)', re.I)


def rows(data):
    out, start, q = [], 0, False
    for i, c in enumerate(data):
        if c == 0x22:
            q = not q
        elif c == 0x0a and not q:
            out.append(data[start:i + 1])
            start = i + 1
    if start < len(data):
        out.append(data[start:] + b'\n')
    return out


def fields(row, delim):
    text = row.decode('latin-1').rstrip('\n')
    if text.endswith('\r'):
        text = text[:-1]
    return [f.encode('latin-1') for f in next(csv.reader(io.StringIO(text, newline=''), delimiter=delim))]


def num(v):
    m = NUM.match(v)
    if not m:
        return (0, 0.0)
    f = float(m.group(0).strip())
    return (1, 0.0) if f != f else (2, f)


def main():
    path, delim, header, keys = sys.argv[1], sys.argv[2], sys.argv[3] == '1', sys.argv[4:]
    data = open(path, 'rb').read()
    rs = rows(data)
    head = rs.pop(0) if header and rs else None
    names = fields(head[3:] if head and head.startswith(b'\xef\xbb\xbf') else head, delim) if head else []
    spec = []
    for k in keys:
        parts = k.split(':')
        desc = parts[-1] == 'desc'
        if parts[-1] in ('asc', 'desc'):
            parts.pop()
        typ = parts.pop() if len(parts) > 1 and parts[-1] in ('text', 'num') else 'text'
        col = ':'.join(parts)
        idx = names.index(col.encode()) if col.encode() in names else int(col) - 1
        spec.append((idx, typ, desc))
    parsed = [(r, fields(r, delim)) for r in rs]

    def cmp(a, b):
        for idx, typ, desc in spec:
            x = a[1][idx] if idx < len(a[1]) else b''
            y = b[1][idx] if idx < len(b[1]) else b''
            if typ == 'num':
                x, y = num(x), num(y)
            d = (x > y) - (x < y)
            if d:
                return -d if desc else d
        return 0
    parsed.sort(key=functools.cmp_to_key(cmp))
    out = sys.stdout.buffer
    if head:
        out.write(head)
    for r, _ in parsed:
        out.write(r)


main()
