"""Compare the portable core run on a CUDA GPU (tools/cuda_core_check.cu) with ascend_rand.

    python tools/cuda_core_check.py OUT_DIR N KEY CTR_LO CTR_HI P THRESHOLD_MINUS_1

OUT_DIR holds what ``cuda_core_check`` wrote for the same arguments.  Each draw
must equal the native (and NumPy) backend's bit for bit: float32 uniforms,
ziggurat normals (with retries and tail repeats, docs/spec.md 5.3) and
Bernoulli bits (section 4).  Exit status 0 when every draw matches.
"""

import sys
from pathlib import Path

import numpy as np

import ascend_rand as ar
from ascend_rand.tables import ziggurat_tables


def main(argv):
    out, n, key, lo, hi, p, t1 = argv
    out, n, key, lo, hi, p, t1 = (Path(out), int(n, 0), int(key, 0), int(lo, 0), int(hi, 0),
                                  float(p), int(t1, 0))
    counter = (lo, hi)
    ours = {
        "uniform.f32": ar.stateless.uniform(n, key, counter),
        "normal.f32": ar.stateless.normal(n, key, counter),
        "bits.u8": ar.stateless.bernoulli(n, key, p, counter).astype(np.uint8),
        "bits_below.u8": (ar.stateless.raw(n, key, counter) <= np.uint32(t1)).astype(np.uint8),
    }
    ok = True
    for name, want in ours.items():
        got = np.fromfile(out / name, dtype=want.dtype)
        same = got.shape == want.shape and got.tobytes() == want.tobytes()
        differ = int((got.view(np.uint8) != want.view(np.uint8)).sum()) if got.shape == want.shape else -1
        print(f"{name:14s} {n} elements: {'bit-exact' if same else f'{differ} bytes differ'}")
        ok &= same
    z = ours["normal.f32"]
    tail = int((np.abs(z) > ziggurat_tables.R_F32).sum())
    print(f"normal: {tail} elements beyond r (each a tail value; about 1 in 62,600 repeated "
          f"a failed tail test)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
