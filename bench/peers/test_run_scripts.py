"""Tests of bench/peers/run.sh's argument checks and of summarize.py's tables (ctest BenchPeers.scripts).

No peer is built here: run.sh must refuse bad arguments before it builds anything, and
summarize.py is checked on Google Benchmark JSON written by the test.
"""
import json
import pathlib
import subprocess
import sys

import pytest

HERE = pathlib.Path(__file__).resolve().parent
RUN = HERE / 'run.sh'
sys.path.insert(0, str(HERE))
import summarize  # noqa: E402


def run_sh(*args, tmp_path):
    (tmp_path / 'data' / 'bvh').mkdir(parents=True, exist_ok=True)  # a shared-data folder
    data = [] if '--data' in args else ['--data', str(tmp_path / 'data')]
    return subprocess.run(['bash', str(RUN), *data, *args, '--out', str(tmp_path / 'out')],
                          capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize('args, message', [
    (['--tables', 'anim,bogus'], "unknown table 'bogus'"),
    (['--tables', 'anim'], 'table anim needs --ozz'),
    (['--ozz', '/nonexistent/ozz'], 'no include/ozz/animation/runtime/animation.h'),
    (['--acl', '/nonexistent/acl'], 'no includes/acl/compression/compress.h'),
    (['--holden', '/nonexistent/mm'], 'no database.h'),
    (['--repetitions', '0'], 'a positive integer'),
    (['--cpu', '999'], 'this machine has cores'),
    (['--data', '/nonexistent/data'], 'no shared data'),
    (['--frobnicate'], "unknown argument '--frobnicate'"),
])
def test_run_sh_refuses_bad_arguments_before_building(args, message, tmp_path):
    r = run_sh(*args, tmp_path=tmp_path)
    assert r.returncode == 2, r.stdout + r.stderr
    assert message in r.stderr
    assert not (tmp_path / 'out').exists()  # nothing written, nothing built


def test_run_sh_help_lists_every_option():
    r = subprocess.run(['bash', str(RUN), '--help'], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0
    for option in ('--ozz', '--acl', '--rtm', '--holden', '--out', '--tables', '--cpu',
                   '--repetitions', '--min-time', '--data', '--prepare-only'):
        assert option in r.stdout


def bench_json(rows):
    """Google Benchmark's JSON: rows = {name: [times in ns per repetition]} (+ one aggregate)."""
    out = []
    for name, times in rows.items():
        for i, t in enumerate(times):
            out.append({'name': name, 'run_name': name, 'run_type': 'iteration',
                        'repetition_index': i, 'real_time': t, 'cpu_time': t, 'time_unit': 'ns',
                        'bytes': 1000.0})
        out.append({'name': name + '_median', 'run_name': name, 'run_type': 'aggregate',
                    'aggregate_name': 'median', 'real_time': -1, 'cpu_time': -1,
                    'time_unit': 'ns'})
    return {'context': {}, 'benchmarks': out}


def test_summary_pairs_rows_with_their_peer_and_gives_throughput_ratios(tmp_path, capsys):
    (tmp_path / 'anim.json').write_text(json.dumps(bench_json({
        'Kinema/Blend/2': [100, 90, 110],          # median 100
        'Ozz/Blend/2': [200, 250, 150],            # median 200 -> 2.00x
        'Kinema/SamplingCompact/Forward': [120],   # paired with Ozz/Sampling/Forward
        'Ozz/Sampling/Forward': [360],             # -> 3.00x
        'Kinema/Sampling/Forward': [72],           # -> 5.00x
        'Kinema/Graph/Locomotion': [700],          # no ozz row: listed as skipped
    })))
    (tmp_path / 'machine.txt').write_text('load before 0.10 0.20 0.30\n')
    summarize.main(tmp_path)
    text = capsys.readouterr().out
    assert '- load before 0.10 0.20 0.30' in text
    line = next(l for l in text.splitlines() if l.startswith('| Kinema/Blend/2'))
    assert '**2.00×**' in line and '100.0 ns (90.0 ns–110.0 ns)' in line
    assert '**3.00×**' in next(l for l in text.splitlines() if 'SamplingCompact' in l)
    assert '**5.00×**' in next(l for l in text.splitlines() if l.startswith('| Kinema/Sampling/Forward'))
    assert 'skipped: Ozz/Graph/Locomotion' in text


def test_summary_sets_two_bone_rows_beside_ozz_with_and_without_its_fk(tmp_path, capsys):
    (tmp_path / 'ik.json').write_text(json.dumps(bench_json({
        'TwoBone/SolveApply': [150],       # positions handed in: beside RunApply only
        'Ozz/TwoBone/RunApply': [150],     # the model matrices handed to the job: 1.00x
        'TwoBone/LocalSolveApply': [200],  # from local transforms: beside FkRunApply, 1.10x
        'TwoBone/FkSolveApply': [250],     # the same by local_to_model: 0.88x
        'Ozz/TwoBone/FkRunApply': [220],
        'TwoBone/SolveCorrect': [120],     # paired with RunApply: 1.25x
    })))
    summarize.main(tmp_path)
    lines = capsys.readouterr().out.splitlines()

    def rows(name):
        return [l for l in lines if l.startswith((f'| {name} ', f'| {name},'))]
    assert len(rows('TwoBone/SolveApply')) == 1
    assert 'Ozz/TwoBone/RunApply' in rows('TwoBone/SolveApply')[0]
    assert '**1.00×**' in rows('TwoBone/SolveApply')[0]
    assert len(rows('TwoBone/LocalSolveApply')) == 1
    assert 'ozz with its FK' in rows('TwoBone/LocalSolveApply')[0]
    assert '**1.10×**' in rows('TwoBone/LocalSolveApply')[0]
    assert '**0.88×**' in rows('TwoBone/FkSolveApply')[0]
    assert '**1.25×**' in rows('TwoBone/SolveCorrect')[0]


def test_summary_reports_errors_and_reads_real_time_rows(tmp_path, capsys):
    data = bench_json({'LBS/arnaud/P/SkinMeshStored/real_time': [1500],
                       'Ozz/LBS/arnaud/P/SkinningJob/real_time': [3000]})
    data['benchmarks'][0]['cpu_time'] = 999999  # real_time rows use wall time
    data['benchmarks'].append({'name': 'DQS/arnaud/P/SkinMeshStored/real_time',
                               'run_name': 'DQS/arnaud/P/SkinMeshStored/real_time',
                               'run_type': 'iteration', 'error_occurred': True,
                               'error_message': 'mesh missing'})
    (tmp_path / 'skin.json').write_text(json.dumps(data))
    summarize.main(tmp_path)
    text = capsys.readouterr().out
    assert '**2.00×**' in text
    assert 'skipped: DQS/arnaud/P/SkinMeshStored/real_time: mesh missing' in text


def test_summary_sets_skinned_positions_beside_the_arithmetic_floor(tmp_path, capsys):
    data = bench_json({'LBS/arnaud/P/SkinMeshStored/real_time': [1250],
                       'LBS/arnaud/PN/SkinMeshStored/real_time': [2400],
                       'Floor/arnaud/P/real_time': [500]})
    (tmp_path / 'skin.json').write_text(json.dumps(data))
    summarize.main(tmp_path)
    lines = capsys.readouterr().out.splitlines()
    floor_rows = [l for l in lines if 'arithmetic floor' in l]
    # Positions alone only: the floor counts the operations of positions.
    assert len(floor_rows) == 1
    assert floor_rows[0].startswith('| LBS/arnaud/P/SkinMeshStored/real_time')
    assert 'Floor/arnaud/P/real_time' in floor_rows[0] and '**0.40×**' in floor_rows[0]


def test_compare_lists_every_common_ratio_and_the_largest_difference(tmp_path, capsys):
    one, two = tmp_path / 'one', tmp_path / 'two'
    one.mkdir(), two.mkdir()
    (one / 'anim.json').write_text(json.dumps(bench_json({'Kinema/Blend/2': [100], 'Ozz/Blend/2': [200],
                                                          'Kinema/LocalToModel': [100], 'Ozz/LocalToModel': [230]})))
    (two / 'anim.json').write_text(json.dumps(bench_json({'Kinema/Blend/2': [100], 'Ozz/Blend/2': [220],
                                                          'Kinema/LocalToModel': [100], 'Ozz/LocalToModel': [230]})))
    summarize.compare(one, two)
    text = capsys.readouterr().out
    assert '| anim | Kinema/Blend/2 | Ozz/Blend/2 | 2.00× | 2.20× | -9.1% |' in text
    assert '+0.0%' in text
    assert 'the largest difference is 9.1% (Kinema/Blend/2 against Ozz/Blend/2)' in text
