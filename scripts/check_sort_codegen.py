#!/usr/bin/env python3
"""check_sort_codegen.py - guard the radix sort's digit-pass kernels against a silent code-generation flip.

Why: the forty-fifth session found that one unused pointer field added to ps_sort_pass_params made the u64 keys
sort 1.70x slower on an H200 (docs/performance.md, forty-fifth section). The tests still passed and the registers
and spills that ptxas reports stayed the same. The PTX showed the cause: NVVM had stopped unswitching the checked
tile path into an unchecked copy, so the kernel's global loads fell from 45 to 15. This check needs nvcc and no
GPU. It compiles src/cuda/radix_sort.cu to PTX for sm_90 with the library's flags (those src/cuda/CMakeLists.txt
sets: keep the two alike; about 15 s), counts every pass
kernel's global loads and stores, and compares them with scripts/sort_codegen.csv. It fails when a kernel lost
more than a quarter of its loads or stores, or when a kernel appeared or disappeared. A change that is meant to
alter the kernels updates the baseline with --update; say so in the commit, with the tune_sort rows that show
the new code is no slower.

    scripts/check_sort_codegen.py [--update] [--nvcc PATH]

Exit status: 0 as the baseline (or updated), 1 a kernel lost code or the set changed, 77 no nvcc.
"""
import argparse
import csv
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BASELINE = os.path.join(ROOT, "scripts", "sort_codegen.csv")
KERNEL = re.compile(r"\.entry (_Z19ps_sort_pass_kernel\w+)")


def count(nvcc):
    """{mangled pass kernel: (global loads, global stores)} from the PTX of radix_sort.cu as the library builds it."""
    with tempfile.TemporaryDirectory() as tmp:
        ptx = os.path.join(tmp, "radix_sort.ptx")
        cmd = [nvcc, "-O3", "-std=c++17", "-arch=sm_90", "--expt-relaxed-constexpr", "-DPSCAN_HAVE_CUDA",
               "-I" + os.path.join(ROOT, "src", "cuda"), "-I" + os.path.join(ROOT, "src", "core"),
               "-I" + os.path.join(ROOT, "include"), "-ptx", "-o", ptx, os.path.join(ROOT, "src", "cuda", "radix_sort.cu")]
        subprocess.run(cmd, check=True)
        text = open(ptx).read()
    out = {}
    for m in KERNEL.finditer(text):
        body = text[m.start():text.index("\n}\n", m.start())]
        out[m.group(1)] = (len(re.findall(r"\bld\.global\.", body)), len(re.findall(r"\bst\.global\.", body)))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--update", action="store_true", help="write the counts as the new baseline")
    ap.add_argument("--nvcc", default=shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc")
    args = ap.parse_args()
    if not os.access(args.nvcc, os.X_OK):
        print("check_sort_codegen: SKIP: no nvcc")
        return 77
    now = count(args.nvcc)
    if args.update:
        with open(BASELINE, "w", newline="") as f:
            w = csv.writer(f, lineterminator="\n")
            w.writerow(["kernel", "global_loads", "global_stores"])
            for k in sorted(now):
                w.writerow([k, now[k][0], now[k][1]])
        print(f"check_sort_codegen: baseline of {len(now)} pass kernels written to {os.path.relpath(BASELINE, ROOT)}")
        return 0
    with open(BASELINE) as f:
        base = {r["kernel"]: (int(r["global_loads"]), int(r["global_stores"])) for r in csv.DictReader(f)}
    bad = []
    for k in sorted(set(base) | set(now)):
        if k not in now or k not in base:
            bad.append(f"{k}: {'gone' if k not in now else 'new'}")
        elif any(n * 4 < b * 3 for n, b in zip(now[k], base[k])):
            bad.append(f"{k}: loads {base[k][0]} -> {now[k][0]}, stores {base[k][1]} -> {now[k][1]}")
    for line in bad:
        print("check_sort_codegen: " + line)
    print(f"check_sort_codegen: {len(now)} pass kernels, {len(bad)} changed past the limit")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
