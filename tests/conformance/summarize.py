#!/usr/bin/env python3
"""Judge a conformance-suite results directory against tests/conformance/expected-failures.txt.

Usage: summarize.py --results DIR --expected FILE --scored a,b,c --unscored x,y [--only NAME]

DIR is the suite's `-o` output directory; every scenario run writes
DIR/server-<scenario>-<ISO timestamp>/checks.json (a JSON array of checks with a
`status` of SUCCESS / FAILURE / WARNING / INFO / SKIPPED).

A scenario PASSES exactly as the suite's own pass rate counts it (tier-check):
no FAILURE check and at least one SUCCESS check. WARNING / INFO / SKIPPED never fail it.
A scenario that left no checks.json (crash, not run) FAILS.

Outcome per scenario, and what it does to the exit code:
  PASS   passed, not listed                   ok
  XFAIL  failed, listed in expected-failures  ok (counted as "skipped")
  FAIL   failed, not listed                   exit 1
  XPASS  passed, but listed                   exit 1 (remove the entry: the list only shrinks)

Summary line (last line printed):
  conformance: N passed, M failed, K skipped
  N = PASS, M = FAIL + XPASS (exactly the scenarios that make the run exit 1),
  K = XFAIL (known failures, tolerated).
An expected-failures entry naming no known scenario is an error too (counted in M).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

TS_SUFFIX = re.compile(r"-\d{4}-\d{2}-\d{2}T[\d-]+Z$")


def load_expected(path: Path) -> dict[str, str]:
    expected: dict[str, str] = {}
    if not path.exists():
        return expected
    for lineno, raw in enumerate(path.read_text().splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        name, _, reason = line.partition("#")
        name = name.strip()
        if not name or " " in name:
            sys.exit(f"{path}:{lineno}: expected '<scenario> # reason', got {raw!r}")
        if not reason.strip():
            print(f"warning: {path}:{lineno}: entry {name!r} has no '# reason'", file=sys.stderr)
        expected[name] = reason.strip()
    return expected


def load_results(results: Path) -> dict[str, list[dict]]:
    """scenario name -> checks (if a scenario ran twice, the latest run wins)."""
    found: dict[str, tuple[str, list[dict]]] = {}
    for checks_file in sorted(results.glob("*/checks.json")):
        dirname = checks_file.parent.name
        stamp_match = TS_SUFFIX.search(dirname)
        stamp = stamp_match.group(0) if stamp_match else ""
        name = TS_SUFFIX.sub("", dirname)
        if name.startswith("server-"):
            # "server-<scenario>"; strip exactly one prefix, since scenario names may
            # themselves start with "server-" (dir server-server-initialize-<ts>).
            name = name[len("server-"):]
        try:
            checks = json.loads(checks_file.read_text())
            if not isinstance(checks, list):
                raise ValueError("checks.json is not a list")
        except Exception as exc:  # noqa: BLE001 - report any unreadable file as a failure
            checks = [{"id": "unreadable-checks-json", "status": "FAILURE", "errorMessage": str(exc)}]
        if name not in found or stamp > found[name][0]:
            found[name] = (stamp, checks)
    return {k: v[1] for k, v in found.items()}


def judge(checks: list[dict] | None) -> tuple[bool, str]:
    if checks is None:
        return False, "no checks.json (scenario did not run or crashed)"
    statuses = [c.get("status") for c in checks]
    failures = [c for c in checks if c.get("status") == "FAILURE"]
    n_ok = statuses.count("SUCCESS")
    n_warn = statuses.count("WARNING")
    if failures:
        ids = sorted({str(c.get("id", "?")) for c in failures})
        return False, f"{len(failures)} failing check(s): {', '.join(ids)}"
    if n_ok == 0:
        return False, "no SUCCESS check (only INFO/WARNING/SKIPPED)"
    return True, f"{n_ok} ok" + (f", {n_warn} warning(s)" if n_warn else "")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--results", required=True, type=Path)
    ap.add_argument("--expected", required=True, type=Path)
    ap.add_argument("--scored", default="")
    ap.add_argument("--unscored", default="")
    ap.add_argument("--only", default="", help="single-scenario mode: judge just this scenario")
    ap.add_argument("--json", type=Path, help="also write a machine-readable summary here")
    args = ap.parse_args()

    scored = [s for s in args.scored.split(",") if s]
    unscored = [s for s in args.unscored.split(",") if s]
    expected = load_expected(args.expected)
    results = load_results(args.results)

    known = set(scored) | set(unscored)
    problems: list[str] = []
    if args.only:
        groups = [("selected", [args.only])]
    else:
        groups = [("scored", scored), ("unscored", unscored)]
        extra = sorted(set(results) - known)
        if extra:
            groups.append(("other", extra))
        for name in sorted(set(expected) - known - set(results)):
            problems.append(f"expected-failures lists unknown scenario {name!r} (typo or removed?)")

    counts = {"PASS": 0, "FAIL": 0, "XFAIL": 0, "XPASS": 0}
    summary: list[dict] = []
    for group, names in groups:
        if not names:
            continue
        print(f"--- {group} scenarios ({len(names)}) ---")
        for name in names:
            ok, why = judge(results.get(name))
            listed = name in expected
            outcome = {(True, False): "PASS", (False, False): "FAIL",
                       (False, True): "XFAIL", (True, True): "XPASS"}[(ok, listed)]
            counts[outcome] += 1
            note = why
            if outcome == "XFAIL":
                note += f" [expected: {expected[name]}]"
            elif outcome == "XPASS":
                note += " [listed in expected-failures but passes: remove the entry]"
            print(f"{outcome:5} {name}: {note}")
            summary.append({"scenario": name, "group": group, "outcome": outcome, "detail": why})

    for p in problems:
        print(f"ERROR {p}")
    if args.json:
        args.json.write_text(json.dumps({"counts": counts, "scenarios": summary, "problems": problems}, indent=2))

    failed = counts["FAIL"] + counts["XPASS"] + len(problems)
    print(f"conformance: {counts['PASS']} passed, {failed} failed, {counts['XFAIL']} skipped")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
