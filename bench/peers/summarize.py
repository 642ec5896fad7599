#!/usr/bin/env python3
"""Summarize bench/peers/run.sh's results folder as markdown: every kinema row beside its peer.

usage: summarize.py RESULTS_DIR                     (the markdown run.sh writes to summary.md)
       summarize.py RESULTS_DIR --against OTHER_DIR   (every ratio beside another run's, and
                                                       the largest difference: reproducibility)

Each <table>.json is Google Benchmark's output with every repetition (run.sh interleaves the
repetitions of all rows at random, so kinema and its peer share the machine's moods). Per row:
the median over repetitions, and the spread as min–max. "× peer" is kinema's throughput divided
by the peer's, i.e. the peer's median time over kinema's; above 1 kinema is faster. Times are CPU
time, or wall time for the rows Google Benchmark measured in real time (names ending /real_time).
"""
import json
import pathlib
import re
import statistics
import sys

# table → [(pattern on kinema's row, peer row template, peer label)]
PAIRS = {
    'anim': [(r'^Kinema/SamplingCompact/(.*)$', r'Ozz/Sampling/\1', 'ozz'),
             (r'^Kinema/(?!SamplingCompact/)(.*)$', r'Ozz/\1', 'ozz')],
    'ik': [(r'^TwoBone/Solve$', 'Ozz/TwoBone/Run', 'ozz'),
           (r'^TwoBone/Solve(Correct|Apply)$', 'Ozz/TwoBone/RunApply', 'ozz'),
           # From local transforms alone: each side runs its FK first.
           (r'^TwoBone/(Fk|Local)SolveApply$', 'Ozz/TwoBone/FkRunApply', 'ozz with its FK')],
    'skin': [(r'^LBS/([a-z_]+)/(P|PN|PNT)/([A-Za-z0-9]+)/real_time$',
              r'Ozz/LBS/\1/\2/SkinningJob/real_time', 'ozz LBS'),
             (r'^DQS/([a-z_]+)/(P|PN|PNT)/([A-Za-z0-9]+)/real_time$',
              r'Ozz/LBS/\1/\2/SkinningJob/real_time', 'ozz LBS'),
             # Positions against the mesh's arithmetic floor (kinema_skin_bench's Floor/ rows:
             # its 8-lane floating-point operations alone); × below 1, 1/× = times the floor.
             (r'^LBS/([a-z_]+)/P/SkinMeshStored/real_time$', r'Floor/\1/P/real_time',
              'arithmetic floor')],
    'compress': [(r'^Decode(Cached)?/(.*)$', r'Acl/Decode/\2', 'ACL')],
    'match': [(r'^Search/BoundedTree/(.*)$', r'Search/BruteForce/\1', 'kinema brute force'),
              (r'^Search/BoundedTree/(.*)$', r'Search/HoldenAabb/\1', 'Holden AABB'),
              (r'^Search/BoundedTree/(.*)$', r'Search/NanoflannKd/\1', 'nanoflann k-d')],
}
COUNTERS = ('bytes', 'max_error_mm', 'mismatches', 'cost_bits_differ')  # shown beside a row
TO_NS = {'ns': 1.0, 'us': 1e3, 'ms': 1e6, 's': 1e9}


def load(path: pathlib.Path):
    """Row name → (times in ns per repetition, counters of the first repetition, error)."""
    rows = {}
    for b in json.loads(path.read_text())['benchmarks']:
        if b.get('run_type') == 'aggregate':
            continue
        name = b.get('run_name', b['name'])
        row = rows.setdefault(name, {'times': [], 'counters': {}, 'error': None})
        if b.get('error_occurred'):
            row['error'] = b.get('error_message', 'error')
            continue
        field = 'real_time' if name.endswith('/real_time') else 'cpu_time'
        row['times'].append(b[field] * TO_NS[b.get('time_unit', 'ns')])
        if not row['counters']:
            row['counters'] = {k: v for k, v in b.items() if k in COUNTERS}
    return rows


def fmt(ns: float) -> str:
    if ns >= 1e6:
        return f'{ns / 1e6:,.2f} ms'
    if ns >= 1e3:
        return f'{ns / 1e3:,.2f} µs'
    return f'{ns:,.1f} ns'


def cell(row) -> str:
    t = row['times']
    return f'{fmt(statistics.median(t))} ({fmt(min(t))}–{fmt(max(t))})'


def pairs_in(rows, pairs):
    """Each (kinema row name, its row, peer row name, the peer's row or None, peer label) of a
    table, in name order; a kinema row may have several peers (the search table)."""
    for name, row in sorted(rows.items()):
        for pattern, template, label in pairs:
            if re.match(pattern, name):
                peer_name = re.sub(pattern, template, name)
                yield name, row, peer_name, rows.get(peer_name), label


def measured(row) -> bool:
    return bool(row) and not row['error'] and bool(row['times'])


def ratio(row, peer) -> float:
    """kinema's throughput ÷ the peer's: the peer's median time over kinema's."""
    return statistics.median(peer['times']) / statistics.median(row['times'])


def tables(folder: pathlib.Path):
    """(table, rows, pairs) for each table of the folder that has results."""
    for table, pairs in PAIRS.items():
        path = folder / f'{table}.json'
        if path.exists():
            yield table, load(path), pairs


def main(folder: pathlib.Path) -> None:
    print(f'# Side-by-side benchmarks: {folder.name}\n')
    machine = folder / 'machine.txt'
    if machine.exists():
        print('\n'.join(f'- {line}' for line in machine.read_text().splitlines()), end='\n\n')
    print('Median over repetitions (min–max in brackets); **× peer** = kinema\'s throughput ÷ the '
          'peer\'s (above 1: kinema is faster).\n')
    for table, rows, pairs in tables(folder):
        print(f'## {table}\n')
        print('| kinema row | kinema | peer | peer row | peer | × peer |')
        print('|---|---:|---|---|---:|---:|')
        missing = []
        for name, row, peer_name, peer, label in pairs_in(rows, pairs):
            if not measured(row):
                missing.append(f'{name}: {row["error"] or "no result"}')
            elif not measured(peer):
                why = peer['error'] if peer else 'not built (peer not given or not found)'
                missing.append(f'{peer_name}: {why}')
            else:
                extra = ''.join(f', {k} {v:g}' for k, v in row['counters'].items() if v)
                peer_extra = ''.join(f', {k} {v:g}' for k, v in peer['counters'].items() if v)
                print(f'| {name}{extra} | {cell(row)} | {label} | {peer_name}{peer_extra} '
                      f'| {cell(peer)} | **{ratio(row, peer):.2f}×** |')
        for m in sorted(set(missing)):
            print(f'\nskipped: {m}')
        print()
    ratio_text = folder / 'compress-ratio.txt'
    if ratio_text.exists():
        print('## compress: ratio and error per source (kinema and ACL, kinema\'s metric)\n')
        print('```')
        print(ratio_text.read_text().strip())
        print('```')


def ratios(folder: pathlib.Path):
    """(table, kinema row, peer row) → kinema ÷ peer throughput, for every pair with both rows."""
    return {(table, name, peer_name): ratio(row, peer)
            for table, rows, pairs in tables(folder)
            for name, row, peer_name, peer, _ in pairs_in(rows, pairs)
            if measured(row) and measured(peer)}


def compare(folder: pathlib.Path, other: pathlib.Path) -> None:
    """Every ratio of `folder` beside the same ratio in `other`, and how far apart they are."""
    a, b = ratios(folder), ratios(other)
    common = sorted(set(a) & set(b))
    if not common:
        sys.exit(f'no pair of rows in common between {folder} and {other}')
    print(f'# Ratios of {folder.name} against {other.name}\n')
    print(f'| table | kinema row | peer row | {folder.name} | {other.name} | difference |')
    print('|---|---|---|---:|---:|---:|')
    worst = (0.0, None)
    for key in common:
        diff = a[key] / b[key] - 1
        worst = max(worst, (abs(diff), key))
        print(f'| {key[0]} | {key[1]} | {key[2]} | {a[key]:.2f}× | {b[key]:.2f}× | {diff:+.1%} |')
    print(f'\n{len(common)} ratios; the largest difference is {worst[0]:.1%} ({worst[1][1]} against '
          f'{worst[1][2]}).')


if __name__ == '__main__':
    if len(sys.argv) == 4 and sys.argv[2] == '--against':
        compare(pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[3]))
    elif len(sys.argv) == 2:
        main(pathlib.Path(sys.argv[1]))
    else:
        sys.exit(__doc__)
