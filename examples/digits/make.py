#!/usr/bin/env python3
"""Writes the digits example of `trellis interactive serve --images image`.

Picks 10 images of each digit 0-9 (100 in all, a fixed seed) from the
handwritten digits bundled with scikit-learn (`sklearn.datasets.load_digits`:
8x8 greyscale, values 0-16; no download) and writes, beside this script:

- `images/dNNNN.png`: each digit upscaled 4x by nearest neighbour to 32x32,
  dark ink on white (matplotlib's `imsave`, colour map `gray_r`, 0..16);
- `points.csv`: `name,image,p0,...,p63`: the name (`dNNNN`, NNNN the index in
  `load_digits`), the image path relative to the CSV, the pixel values
  (`pJ` is pixel J, row by row, 0-16) as features, less the pixels that are
  blank in all 100 digits (a constant feature has no variance);
- `labels.csv`: `name,digit`: the true digit of each name, to score a session
  afterwards (kept out of points.csv: every column there but `name` and
  `image` is a feature, and the person should judge by looking).

Run it from anywhere: `python3 examples/digits/make.py` (needs numpy,
scikit-learn and matplotlib, e.g. the test environment of scripts/test-python).
"""

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from sklearn.datasets import load_digits  # noqa: E402

PER_CLASS = 10
SEED = 24
SCALE = 4


def main() -> None:
    here = Path(__file__).resolve().parent
    digits = load_digits()
    rng = np.random.default_rng(SEED)
    picked = []
    for k in range(10):
        idx = np.flatnonzero(digits.target == k)
        picked.extend(sorted(rng.choice(idx, size=PER_CLASS, replace=False).tolist()))
    # Interleave the classes by a seeded shuffle: the file order gives no hint.
    picked = [picked[i] for i in rng.permutation(len(picked))]
    out = here / "images"
    out.mkdir(exist_ok=True)
    for old in out.glob("*.png"):
        old.unlink()
    # Pixels that are blank in every picked digit carry nothing, and the DDT's
    # default Sigma (var/2 per feature) needs a positive variance: left out.
    keep = [j for j in range(64) if np.ptp(digits.data[picked, j]) > 0]
    rows = ["name,image," + ",".join(f"p{j}" for j in keep)]
    labels = ["name,digit"]
    for i in picked:
        name = f"d{i:04d}"
        img = digits.images[i]
        big = np.kron(img, np.ones((SCALE, SCALE)))
        path = out / f"{name}.png"
        plt.imsave(path, big, cmap="gray_r", vmin=0, vmax=16, metadata={"Software": None})
        pixels = ",".join(str(int(digits.data[i, j])) for j in keep)
        rows.append(f"{name},images/{name}.png,{pixels}")
        labels.append(f"{name},{int(digits.target[i])}")
    (here / "points.csv").write_text("\n".join(rows) + "\n")
    (here / "labels.csv").write_text("\n".join(labels) + "\n")
    print(f"wrote {len(picked)} digits ({len(keep)} of 64 pixels vary) to {here}")


if __name__ == "__main__":
    main()
