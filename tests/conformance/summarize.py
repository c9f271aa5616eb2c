#!/usr/bin/env python3
"""Judge a conformance-suite results directory against an expected-failures list
(tests/conformance/expected-failures.txt for the server run, expected-failures-client.txt for
the client run).

Usage: summarize.py --results DIR --expected FILE --scored a,b,c --unscored x,y [--only NAME]
                    [--prefix P] [--exit-status DIR --allow-client-error a,b] [--label L]

DIR is the suite's `-o` output directory; every scenario run writes
DIR/<prefix><scenario>-<ISO timestamp>/checks.json (a JSON array of checks with a
`status` of SUCCESS / FAILURE / WARNING / INFO / SKIPPED). The server mode's prefix is
"server-" (the default); the client mode has none, and a scenario name's "/" (auth/...) makes
a subdirectory: DIR/auth/metadata-default-<ISO timestamp>/checks.json.

A scenario PASSES exactly as the suite's own pass rate counts it (tier-check):
no FAILURE check and at least one SUCCESS check. WARNING / INFO / SKIPPED never fail it.
A scenario that left no checks.json (crash, not run) FAILS.

Client runs (--exit-status DIR, the directory tests/conformance/client-exit.sh writes
<scenario>.rc files into) also need the client program to have exited 0: a client that
crashed or was stopped at the timeout FAILS even when the mock server's checks passed, except
the scenarios named in --allow-client-error (the suite expects the client to give up there).

Outcome per scenario, and what it does to the exit code:
  PASS   passed, not listed                   ok
  XFAIL  failed, listed in expected-failures  ok (counted as "skipped")
  FAIL   failed, not listed                   exit 1
  XPASS  passed, but listed                   exit 1 (remove the entry: the list only shrinks)

Summary line (last line printed; "conformance" is --label):
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


def load_results(results: Path, prefix: str) -> dict[str, list[dict]]:
    """scenario name -> checks (if a scenario ran twice, the latest run wins)."""
    found: dict[str, tuple[str, list[dict]]] = {}
    for checks_file in sorted(results.rglob("checks.json")):
        dirname = checks_file.parent.relative_to(results).as_posix()
        stamp_match = TS_SUFFIX.search(dirname)
        stamp = stamp_match.group(0) if stamp_match else ""
        name = TS_SUFFIX.sub("", dirname)
        if prefix and name.startswith(prefix):
            # "server-<scenario>"; strip exactly one prefix, since scenario names may
            # themselves start with "server-" (dir server-server-initialize-<ts>).
            name = name[len(prefix):]
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


def client_exit(exit_dir: Path, name: str) -> tuple[bool, str]:
    """Whether the client program of scenario `name` exited 0, and if not, how it ended."""
    status_file = exit_dir / f"{name}.rc"
    try:
        status = status_file.read_text().strip()
    except OSError:
        return False, "the client left no exit status (not run, or stopped before it ended)"
    if status == "0":
        return True, ""
    if status == "143":
        return False, "the client was stopped (exit 143: the scenario's timeout?)"
    return False, f"the client exited {status}"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--results", required=True, type=Path)
    ap.add_argument("--expected", required=True, type=Path)
    ap.add_argument("--scored", default="")
    ap.add_argument("--unscored", default="")
    ap.add_argument("--only", default="", help="single-scenario mode: judge just this scenario")
    ap.add_argument("--json", type=Path, help="also write a machine-readable summary here")
    ap.add_argument("--prefix", default="server-",
                    help="prefix of the result directories before the scenario name ('' for client runs)")
    ap.add_argument("--exit-status", type=Path,
                    help="client runs: the directory of <scenario>.rc files written by client-exit.sh")
    ap.add_argument("--allow-client-error", default="",
                    help="client runs: scenarios whose client may exit non-zero")
    ap.add_argument("--label", default="conformance", help="the summary line's first word(s)")
    args = ap.parse_args()

    scored = [s for s in args.scored.split(",") if s]
    unscored = [s for s in args.unscored.split(",") if s]
    expected = load_expected(args.expected)
    results = load_results(args.results, args.prefix)
    allow_client_error = {s for s in args.allow_client_error.split(",") if s}

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
            if args.exit_status is not None and name not in allow_client_error:
                exited, how = client_exit(args.exit_status, name)
                if not exited:
                    ok, why = False, f"{why}; {how}"
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
    print(f"{args.label}: {counts['PASS']} passed, {failed} failed, {counts['XFAIL']} skipped")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
