#!/usr/bin/env python3
"""How many GPUs do the ITP trace's ten teams need for every team's p95 wait <= 1 h?

Answers it for four queue designs by replaying the trace through `tollgate simulate` (the real
scheduling core) and searching the smallest quotas that meet the target:

  isolated  each team its own ClusterQueue, no cohort: the smallest quota per team, found alone
  cohort    the same ten ClusterQueues in one cohort: idle quota is borrowed, never reclaimed
  reclaim   cohort plus reclaimWithinCohort: Any (a team takes back what others borrowed)
  fair      reclaim plus fair sharing (Kueue's fairSharing.enable)

The pooled designs keep the isolated quotas' proportions and scale them all by one factor, so
the answer is "the same entitlements, how much smaller". Writes results.csv and results.md
into --out, and each design's final replay (CSV and SVG plots) into --out/<design>/.

  bench/itp_sizing.py --tollgate=build/cmd/tollgate/tollgate \
      --trace=../shared/traces/itp_elasticflow.csv --out=/tmp/itp-sizing
"""
import argparse
import csv
import math
import os
import subprocess
import sys
import time

TARGET_P95_S = 3600.0
RESOURCE = "nvidia.com/gpu"


def queues_yaml(quotas, cohort, reclaim):
    docs = ["apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\nmetadata:\n  name: gpu\n"]
    for team, quota in sorted(quotas.items()):
        cq = (f"apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata:\n  name: {team}\n"
              f"spec:\n  namespaceSelector: {{}}\n")
        if cohort:
            cq += "  cohort: itp\n"
        cq += ("  resourceGroups:\n  - coveredResources: [\"nvidia.com/gpu\"]\n    flavors:\n"
               "    - name: gpu\n      resources:\n      - name: nvidia.com/gpu\n"
               f"        nominalQuota: {quota}\n")
        if reclaim:
            cq += "  preemption:\n    reclaimWithinCohort: Any\n"
        docs.append(cq)
        docs.append(f"apiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\nmetadata:\n"
                    f"  namespace: {team}\n  name: {team}\nspec:\n  clusterQueue: {team}\n")
    return "---\n".join(docs)


class Simulator:
    def __init__(self, tollgate, work):
        self.tollgate = tollgate
        self.work = work
        self.replays = 0
        self.seconds = 0.0

    def run(self, name, trace, quotas, cohort, reclaim, fair, out_dir=None):
        path = os.path.join(self.work, name + ".yaml")
        with open(path, "w") as f:
            f.write(queues_yaml(quotas, cohort, reclaim))
        args = [self.tollgate, "simulate", f"--trace={trace}", f"--queues={path}", "--quiet"]
        if fair:
            args.append("--fair-sharing")
        out = out_dir or os.path.join(self.work, "last")
        args += [f"--out={out}"]
        if out_dir is None:
            args.append("--plots=false")
        start = time.monotonic()
        subprocess.run(args, check=True, stdout=subprocess.DEVNULL)
        self.seconds += time.monotonic() - start
        self.replays += 1
        rows = {}
        with open(os.path.join(out, "queues.csv")) as f:
            for row in csv.DictReader(f):
                rows[row["queue"]] = row
        return rows


def p95(row):
    return float(row["wait_p95_s"])  # "inf" parses to infinity


def round8(x):
    return max(8, int(math.ceil(x / 8.0)) * 8)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tollgate", required=True)
    ap.add_argument("--trace", required=True)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    work = os.path.join(args.out, "work")
    os.makedirs(work, exist_ok=True)
    sim = Simulator(args.tollgate, work)

    with open(args.trace) as f:
        reader = csv.DictReader(f)
        header = reader.fieldnames
        by_team = {}
        for row in reader:
            by_team.setdefault(row["team"], []).append(row)
    teams = sorted(by_team)
    max_gpus = {t: max(int(r["gpus"]) for r in by_team[t]) for t in teams}
    # Busy GPUs over the trace window if every job started at once: below its mean a queue
    # falls further behind for good, so no quota under it can meet the target (and replays of
    # such hopeless backlogs are the slow ones).
    window = max(int(r["submit_s"]) for rows in by_team.values() for r in rows)
    mean_demand = {t: sum(int(r["gpus"]) * int(r["duration_s"]) for r in by_team[t]) / window
                   for t in teams}

    # Isolated: each team alone, the smallest multiple of 8 meeting the target (binary search).
    isolated = {}
    for i, team in enumerate(teams):
        trace = os.path.join(work, f"trace-{team}.csv")
        with open(trace, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=header)
            w.writeheader()
            w.writerows(by_team[team])
        # lo is known (or, at the mean demand, taken) to miss the target; hi is raised until it meets.
        lo = max(round8(max(max_gpus[team], mean_demand[team])) - 8, 0)
        hi = lo + 8
        while p95(sim.run(f"iso-{team}", trace, {team: hi}, False, False, False)[team]) > TARGET_P95_S:
            lo, hi = hi, round8(hi * 1.5)
        while hi - lo > 8:
            mid = round8((lo + hi) / 2)
            if mid >= hi:
                break
            ok = p95(sim.run(f"iso-{team}", trace, {team: mid}, False, False, False)[team]) <= TARGET_P95_S
            lo, hi = (lo, mid) if ok else (mid, hi)
        isolated[team] = hi
        print(f"[{i + 1}/{len(teams)}] isolated {team}: {hi} GPUs ({sim.replays} replays, {sim.seconds:.0f}s)",
              file=sys.stderr, flush=True)

    designs = [("isolated", False, False, False), ("cohort", True, False, False),
               ("reclaim", True, True, False), ("fair", True, True, True)]
    results = {}
    for name, cohort, reclaim, fair in designs:
        if name == "isolated":
            quotas = dict(isolated)
        else:
            # The smallest scale of the isolated quotas (1/64 steps) meeting the target.
            def quotas_at(scale):
                return {t: round8(isolated[t] * scale / 64.0) for t in teams}

            def meets(scale):
                rows = sim.run(f"{name}-search", args.trace, quotas_at(scale), cohort, reclaim, fair)
                return all(p95(rows[t]) <= TARGET_P95_S for t in teams)

            # At the pooled mean demand the cohort cannot keep up: start the search above it.
            pooled_mean = sum(mean_demand.values())
            lo = max(0, int(64 * pooled_mean / sum(isolated.values())) - 1)
            hi = 64
            while hi - lo > 1:
                mid = (lo + hi) // 2
                if meets(mid):
                    hi = mid
                else:
                    lo = mid
                print(f"  {name}: scale {mid}/64 -> {'meets' if hi == mid else 'misses'} "
                      f"({sim.replays} replays, {sim.seconds:.0f}s)", file=sys.stderr, flush=True)
            quotas = quotas_at(hi)
        rows = sim.run(name, args.trace, quotas, cohort, reclaim, fair,
                       out_dir=os.path.join(args.out, name))
        summary = open(os.path.join(args.out, name, "summary.txt")).read()
        results[name] = (quotas, rows, summary)
        print(f"{name}: {sum(quotas.values())} GPUs", file=sys.stderr, flush=True)

    with open(os.path.join(args.out, "results.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["design", "gpus", "worst_team_p95_wait_s", "overall_p50_wait_s", "mean_used_gpus",
                    "utilization", "preemptions", "lost_gpu_hours"] + [f"quota_{t}" for t in teams])
        for name, (quotas, rows, _) in results.items():
            total = sum(quotas.values())
            used = float(rows["ALL"]["mean_used"])
            w.writerow([name, total, max(p95(rows[t]) for t in teams), rows["ALL"]["wait_p50_s"],
                        f"{used:.1f}", f"{used / total:.3f}", rows["ALL"]["preemptions"],
                        rows["ALL"]["lost_hours"]] + [quotas[t] for t in teams])
    with open(os.path.join(args.out, "results.md"), "w") as f:
        f.write("| design | GPUs | worst team p95 wait | utilization | preemptions | lost GPU-hours |\n")
        f.write("| --- | ---: | ---: | ---: | ---: | ---: |\n")
        for name, (quotas, rows, _) in results.items():
            total = sum(quotas.values())
            used = float(rows["ALL"]["mean_used"])
            worst = max(p95(rows[t]) for t in teams)
            f.write(f"| {name} | {total} | {worst / 60:.0f} min | {100 * used / total:.1f} % | "
                    f"{rows['ALL']['preemptions']} | {float(rows['ALL']['lost_hours']):.0f} |\n")
    print(open(os.path.join(args.out, "results.md")).read())
    print(f"{sim.replays} replays in {sim.seconds:.0f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
