"""scripts/plot_bench.py --targets: the issues' primitive targets judged from `pscan bench --csv` rows (no GPU:
synthetic rows with known ratios, so a wrong bound or a wrong "worst row" fails here)."""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "scripts", "plot_bench.py")
HEADER = ("backend,device,algo,type,op,kind,direction,n,time_us,gbps,of_copy,of_cub,cub_time_us,in_place,spread,"
          "primitive\n")


def row(device, algo, prim, t, kind, log2n, time_us, of_copy, of_cub, direction="forward"):
    return '%s,"%s",%s,%s,sum,%s,%s,%d,%g,1,%g,%g,1,0,0.01,%s\n' % (
        "cuda", device, algo, t, kind, direction, 1 << log2n, time_us, of_copy, of_cub, prim)


def targets(tmp_path, rows):
    path = tmp_path / "bench.csv"
    path.write_text(HEADER + "".join(rows))
    out = subprocess.run([sys.executable, SCRIPT, "--targets", str(path)], capture_output=True, text=True, check=True)
    return {line.split("  ")[2].strip(): line for line in out.stdout.splitlines() if line.startswith("  issue")}


def test_pass_and_miss_per_target(tmp_path):
    lines = targets(tmp_path, [
        row("GPU A", "decoupled-lookback", "segscan", "i32", "inclusive", 28, 100, 0.95, 1.30),
        row("GPU A", "decoupled-lookback", "rle", "i32", "inclusive", 28, 100, 0.40, 1.10),
    ])
    seg = [v for k, v in lines.items() if k.startswith("segmented scan")]
    rle = [v for k, v in lines.items() if k.startswith("run-length")]
    assert len(seg) == 1 and "PASS" in seg[0]
    assert len(rle) == 1 and "MISS" in rle[0] and "1.100 x CUB" in rle[0]


def test_worst_size_decides_and_call_cost_uses_the_copy_row(tmp_path):
    rows = []
    for k in range(10, 17):
        rows.append(row("GPU B", "copy", "reduce", "u8", "inclusive", k, 4.0, 1.0, 0))
        # one slow size (2^13): 0.65x CUB and 1.5x a copy call; every other size is faster than CUB
        slow = k == 13
        rows.append(row("GPU B", "decoupled-lookback", "reduce", "u8", "inclusive", k, 6.0 if slow else 4.4,
                        0.5, 0.65 if slow else 1.2))
    lines = targets(tmp_path, rows)
    cub = [v for k, v in lines.items() if k.startswith("reduce, at least CUB")][0]
    call = [v for k, v in lines.items() if k.startswith("reduce, a call")][0]
    assert "MISS" in cub and "0.650 x CUB" in cub and "2^13" in cub
    assert "MISS" in call and "1.500 x a copy call" in call


def test_targets_without_their_primitive_are_left_out(tmp_path):
    lines = targets(tmp_path, [row("GPU C", "decoupled-lookback", "sort", "u64", "keys", 28, 100, 0.1, 1.03)])
    assert len(lines) == 1
    assert "PASS" in list(lines.values())[0]


def test_compact_and_partition_by_flags_and_by_predicate(tmp_path):
    lines = targets(tmp_path, [
        row("GPU D", "decoupled-lookback", "select", "i32", "flags", 28, 100, 0.9, 1.25),
        row("GPU D", "decoupled-lookback", "partition", "i32", "flags", 28, 100, 0.9, 1.15),
        row("GPU D", "decoupled-lookback", "select", "i32", "greater", 28, 100, 0.9, 1.40),
        # a CSV written before select and partition had cases: the predicate's rows say "inclusive"
        row("GPU D", "decoupled-lookback", "partition", "i32", "inclusive", 28, 100, 0.9, 1.05),
    ])
    compact, split = lines["compact by flags, 1.2x CUB at 2^28"], lines["partition by flags, 1.2x CUB at 2^28"]
    assert "PASS" in compact and "1.250 x CUB" in compact and "flags" in compact
    assert "MISS" in split and "1.150 x CUB" in split
    assert "PASS" in lines["compact by predicate, 1.2x CUB at 2^28"]
    old = lines["partition by predicate, 1.2x CUB at 2^28"]
    assert "MISS" in old and "1.050 x CUB" in old and "inclusive" in old


def test_flags_target_without_flags_rows_is_not_measured(tmp_path):
    lines = targets(tmp_path, [row("GPU E", "decoupled-lookback", "select", "i32", "inclusive", 28, 100, 0.9, 1.3)])
    flags = lines["compact by flags, 1.2x CUB at 2^28"]
    assert "not measured" in flags and "PASS" not in flags and "MISS" not in flags
    assert "PASS" in lines["compact by predicate, 1.2x CUB at 2^28"]
    assert not any(k.startswith("partition") for k in lines)  # partition was not benched at all: left out


def test_a_tuning_csv_beside_the_bench_ones_is_skipped(tmp_path):
    bench = tmp_path / "h-rle.csv"
    bench.write_text(HEADER + row("GPU E", "decoupled-lookback", "rle", "i32", "inclusive", 28, 100, 0.4, 1.35))
    tune = tmp_path / "h-rle-tune.csv"
    tune.write_text("variant,type,variant,n,us,frac_copy,vs_cub,spread,check\nbase,i32,rle.v8,1024,4.0,1,1,0,ok\n")
    out = subprocess.run([sys.executable, SCRIPT, "--targets", str(bench), str(tune)], capture_output=True, text=True,
                         check=True)
    assert "not a `pscan bench` CSV" in out.stderr
    assert [line for line in out.stdout.splitlines() if "run-length" in line and "PASS" in line]


def test_a_primitive_in_its_own_file_ignores_an_older_combined_one(tmp_path):
    # h-patterns.csv (an older run holding several primitives) says partition misses; h-split.csv, partition's own
    # file, says it passes: the targets read the named file alone, and still read the combined one for the rest
    old = tmp_path / "h-patterns.csv"
    old.write_text(HEADER + row("GPU F", "decoupled-lookback", "partition", "i32", "flags", 28, 100, 0.5, 0.6)
                   + row("GPU F", "decoupled-lookback", "rle", "i32", "inclusive", 28, 100, 0.4, 1.35))
    new = tmp_path / "h-split.csv"
    new.write_text(HEADER + row("GPU F", "decoupled-lookback", "partition", "i32", "flags", 28, 100, 0.9, 1.25))
    out = subprocess.run([sys.executable, SCRIPT, "--targets", str(old), str(new)], capture_output=True, text=True,
                         check=True).stdout
    part = [line for line in out.splitlines() if "partition by flags" in line]
    assert len(part) == 1 and "PASS" in part[0] and "1.250 x CUB" in part[0]
    assert [line for line in out.splitlines() if "run-length" in line and "PASS" in line]


def test_expand_targets_read_their_case_and_sizes(tmp_path):
    # (case, log2 n, of copy): average 4 0.85 at 2^28 but 0.70 at 2^30 (the worst decides); average 64 0.82 and
    # 0.83 at 2^24 and 2^26, and a slow 2^16 (latency) outside the sizes the target holds at
    cases = [("avg-4", 28, 0.85), ("avg-4", 30, 0.70), ("avg-64", 16, 0.40), ("avg-64", 24, 0.82), ("avg-64", 26, 0.83)]
    lines = targets(tmp_path, [row("GPU E", "decoupled-lookback", "expand", "u32", kind, k, 100, f, 0)
                               for kind, k, f in cases])
    four = [v for k, v in lines.items() if k.startswith("expand, counts averaging 4,")]
    sixty_four = [v for k, v in lines.items() if k.startswith("expand, counts averaging 64,")]
    assert len(four) == 1 and "MISS" in four[0] and "0.700 of copy" in four[0] and "2^30" in four[0]
    assert len(sixty_four) == 1 and "PASS" in sixty_four[0] and "0.820 of copy" in sixty_four[0]


def test_small_call_targets_of_compact_partition_and_expand(tmp_path):
    # issue 10's "a call at n <= 2^16 within 1.3x a copy call", per pattern: compact at 1.25x everywhere (PASS),
    # partition at 1.5x at 2^14 alone (MISS there), expand at 1.2x but 3x at 2^17 (outside the sizes: PASS)
    rows = []
    for k in range(10, 18):
        for prim, kind in (("select", "flags"), ("partition", "greater"), ("expand", "avg-4")):
            rows.append(row("GPU G", "copy", prim, "i32" if prim != "expand" else "u32", kind, k, 4.0, 1.0, 0))
        rows.append(row("GPU G", "decoupled-lookback", "select", "i32", "flags", k, 5.0, 0.5, 1.4))
        rows.append(row("GPU G", "decoupled-lookback", "partition", "i32", "greater", k, 6.0 if k == 14 else 5.0,
                        0.5, 1.4))
        rows.append(row("GPU G", "decoupled-lookback", "expand", "u32", "avg-4", k, 12.0 if k == 17 else 4.8, 0.5, 0))
    lines = targets(tmp_path, rows)
    compact = lines["compact, a call at n <= 2^16 within 1.3x a copy call"]
    split = lines["partition, a call at n <= 2^16 within 1.3x a copy call"]
    expand = lines["expand, a call at n <= 2^16 within 1.3x a copy call"]
    assert "PASS" in compact and "1.250 x a copy call" in compact
    assert "MISS" in split and "1.500 x a copy call" in split and "2^14" in split
    assert "PASS" in expand and "1.200 x a copy call" in expand


def test_mission_rows_judge_every_size_against_cub(tmp_path):
    # "at least CUB at every n", per primitive with a CUB peer: one slow size (2^22) decides; a primitive not
    # benched (sort) is left out
    rows = [row("GPU F", "decoupled-lookback", "partition", "i64", "greater", k, 10, 0.6, 0.8 if k == 22 else 1.1)
            for k in range(10, 31)]
    rows.append(row("GPU F", "decoupled-lookback", "segscan", "i32", "inclusive", 12, 10, 0.5, 1.0))
    path = tmp_path / "bench.csv"
    path.write_text(HEADER + "".join(rows))
    out = subprocess.run([sys.executable, SCRIPT, "--targets", str(path)], capture_output=True, text=True, check=True)
    mission = {line.split("  ")[2].strip(): line for line in out.stdout.splitlines() if line.startswith("  mission")}
    part = mission["partition, at least CUB at every n"]
    assert "MISS" in part and "0.800 x CUB" in part and "2^22" in part
    assert "PASS" in mission["segmented scan, at least CUB at every n"]  # a tie is "at least"
    assert not any(k.startswith("sort") for k in mission)


def test_call_cost_uses_the_copy_of_its_own_file(tmp_path):
    # two runs of the same sizes in two files: each call is judged against its own run's copy (the other file's
    # copy, twice as fast, would make the first run's call 2.0x)
    first = tmp_path / "h200-compact.csv"
    other = tmp_path / "h200-select-old.csv"
    first.write_text(HEADER + "".join(row("GPU G", algo, "select", "i32", "greater", 12, t, 1, 1)
                                      for algo, t in (("copy", 4.0), ("decoupled-lookback", 4.8))))
    other.write_text(HEADER + "".join(row("GPU G", algo, "select", "i32", "greater", 12, t, 1, 1)
                                      for algo, t in (("copy", 2.0), ("decoupled-lookback", 2.4))))
    out = subprocess.run([sys.executable, SCRIPT, "--targets", str(first), str(other)], capture_output=True,
                         text=True, check=True)
    call = [line for line in out.stdout.splitlines() if "compact, a call" in line][0]
    assert "PASS" in call and "1.200 x a copy call" in call


def test_reverse_rows_are_not_judged_against_forward_targets(tmp_path):
    # a reverse segmented scan has no CUB peer (of_cub 0) and its own speed: the forward rows alone decide
    rows = [row("GPU R", "decoupled-lookback", "segscan", "i32", "inclusive", k, 10, 0.95, 1.3) for k in range(10, 31)]
    rows += [row("GPU R", "decoupled-lookback", "segscan", "i32", "inclusive", k, 20, 0.5, 0, "reverse")
             for k in range(10, 31)]
    lines = targets(tmp_path, rows)
    seg = [v for k, v in lines.items() if k.startswith("segmented scan")]
    assert len(seg) == 1 and "PASS" in seg[0] and "0.950 of copy" in seg[0]
    out = subprocess.run([sys.executable, SCRIPT, "--targets", str(tmp_path / "bench.csv")], capture_output=True,
                         text=True, check=True).stdout
    mission = [line for line in out.splitlines() if "segmented scan, at least CUB" in line]
    assert len(mission) == 1 and "PASS" in mission[0] and "1.300 x CUB" in mission[0]
