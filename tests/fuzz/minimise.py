#!/usr/bin/env python3
"""Picks at most MAX inputs of a libFuzzer merge (its control file) that cover the most
features: greedy set cover, the input adding the most uncovered features first, the smaller
one on a tie. Copies them into OUT. Used by `run.sh --merge` to keep committed corpora small.

    minimise.py CONTROL_FILE MAX OUT"""

import heapq
import pathlib
import shutil
import sys

control, most, out = sys.argv[1], int(sys.argv[2]), pathlib.Path(sys.argv[3])
lines = pathlib.Path(control).read_text().splitlines()
count = int(lines[0])
files = lines[2 : 2 + count]
features, sizes = {}, {}
for line in lines[2 + count :]:
    kind, _, rest = line.partition(" ")
    if kind == "STARTED":
        index, size = rest.split()
        sizes[int(index)] = int(size)
    elif kind == "FT":
        index, *found = rest.split()
        features[int(index)] = set(found)

covered, picked = set(), []
# Lazy greedy: a heap of (-gain, size, index); a popped gain is checked against `covered`.
heap = [(-len(f), sizes.get(i, 0), i) for i, f in features.items() if f]
heapq.heapify(heap)
while heap and len(picked) < most:
    gain, size, index = heapq.heappop(heap)
    fresh = len(features[index] - covered)
    if fresh == 0:
        continue
    if fresh < -gain:
        heapq.heappush(heap, (-fresh, size, index))
        continue
    covered |= features[index]
    picked.append(index)

total = set().union(*features.values()) if features else set()
out.mkdir(parents=True, exist_ok=True)
for index in picked:
    shutil.copy(files[index], out / pathlib.Path(files[index]).name)
print(f"   kept {len(picked)} of {count} inputs, {len(covered)} of {len(total)} features")
