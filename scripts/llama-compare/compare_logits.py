#!/usr/bin/env python3
"""Compares two float32 .npy logit files [positions, vocab] row by row.

Prints the largest |a - b| over all logits, the positions whose argmax
agrees, and the mean and largest KL(softmax(a) || softmax(b)); exits 1 when
--max-abs or --min-argmax is given and not met. Plain Python: no numpy.
"""
import argparse
import array
import ast
import math
import sys


def read_npy(path):
    with open(path, "rb") as f:
        if f.read(6) != b"\x93NUMPY":
            sys.exit(f"{path}: not a .npy file")
        major = f.read(2)[0]
        size = f.read(2 if major == 1 else 4)
        length = int.from_bytes(size, "little")
        header = ast.literal_eval(f.read(length).decode("latin1"))
        if header["descr"] != "<f4" or header["fortran_order"]:
            sys.exit(f"{path}: expected little-endian float32 in C order")
        shape = header["shape"]
        if len(shape) != 2:
            sys.exit(f"{path}: expected [positions, vocab], found {shape}")
        values = array.array("f")
        values.frombytes(f.read())
        if len(values) != shape[0] * shape[1]:
            sys.exit(f"{path}: {len(values)} values for shape {shape}")
        return shape, values


def log_softmax(row):
    top = max(row)
    total = math.fsum(math.exp(v - top) for v in row)
    shift = top + math.log(total)
    return [v - shift for v in row]


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("a")
    parser.add_argument("b")
    parser.add_argument("--max-abs", type=float)
    parser.add_argument("--min-argmax", type=float,
                        help="the share of positions whose argmax agrees")
    args = parser.parse_args()
    (rows, vocab), a = read_npy(args.a)
    shape_b, b = read_npy(args.b)
    if shape_b != (rows, vocab):
        sys.exit(f"shapes differ: {(rows, vocab)} and {shape_b}")
    worst, worst_at, agree, kls = 0.0, (0, 0), 0, []
    for r in range(rows):
        ra = a[r * vocab:(r + 1) * vocab]
        rb = b[r * vocab:(r + 1) * vocab]
        for i, (x, y) in enumerate(zip(ra, rb)):
            d = abs(x - y)
            if not d <= worst:  # also catches NaN
                worst, worst_at = d, (r, i)
        agree += max(range(vocab), key=ra.__getitem__) == max(
            range(vocab), key=rb.__getitem__)
        la, lb = log_softmax(ra), log_softmax(rb)
        kls.append(max(0.0, math.fsum(math.exp(p) * (p - q)
                                      for p, q in zip(la, lb))))
    print(f"positions {rows}, vocab {vocab}: max |dlogit| {worst:.3g} "
          f"(position {worst_at[0]}, token {worst_at[1]}), argmax "
          f"{agree}/{rows}, KL mean {math.fsum(kls) / rows:.3g} "
          f"max {max(kls):.3g}")
    ok = True
    if args.max_abs is not None and not worst <= args.max_abs:
        print(f"FAIL: max |dlogit| {worst:.3g} > {args.max_abs:g}")
        ok = False
    if args.min_argmax is not None and agree < args.min_argmax * rows:
        print(f"FAIL: argmax agrees at {agree}/{rows}")
        ok = False
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
