#!/usr/bin/env python3
"""Writes salsa_20_excerpt_30fps.bvh from shared/data/bvh/cmu_daz_acrnn/salsa_20.bvh: frames
560-899 of the 120 fps take, every 4th kept (30 fps, 85 frames), numbers rounded to 3 decimals.
Usage: python3 make_excerpt.py ../shared/data/bvh/cmu_daz_acrnn/salsa_20.bvh OUT.bvh"""
import sys

lines = open(sys.argv[1]).read().split('\n')
at = next(k for k, line in enumerate(lines) if line.strip().startswith('Frame Time'))
frames = [line for line in lines[at + 1:] if line.strip()][560:900:4]


def rounded(value):
    text = '%.3f' % float(value)
    return text.rstrip('0').rstrip('.') if '.' in text else text


out = lines[:at - 1] + ['Frames: %d' % len(frames), 'Frame Time: 0.033333']
out += [' '.join(rounded(v) for v in line.split()) for line in frames]
open(sys.argv[2], 'w').write('\n'.join(out) + '\n')
