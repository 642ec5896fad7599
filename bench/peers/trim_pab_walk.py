#!/usr/bin/env python3
"""Keep ozz's 67-joint pab skeleton out of the ProAnimationBank walk's 76-node GLB.

usage: trim_pab_walk.py IN.glb OUT.glb

`kinema convert tests/data/fbx/ozz_pab/walk.fbx` writes the whole FBX scene: the 68-node biped
under Hips plus 3 cameras, a sky light and their targets. ozz's own pab skeleton is the Hips
subtree without the biped's "Bip01 Footsteps" helper; this keeps exactly those nodes (in their
order) and their animation channels, so that gltf2ozz and kinema read the same 67 joints.
"""
import json
import struct
import sys


def main(src: str, dst: str) -> None:
    data = open(src, 'rb').read()
    json_length = struct.unpack_from('<I', data, 12)[0]
    gltf = json.loads(data[20:20 + json_length])
    nodes = gltf['nodes']
    keep = []

    def visit(i: int) -> None:
        if nodes[i]['name'] != 'Bip01 Footsteps':
            keep.append(i)
            for child in nodes[i].get('children', []):
                visit(child)

    hips = next(i for i, node in enumerate(nodes) if node['name'] == 'Hips')
    visit(hips)
    new_index = {old: new for new, old in enumerate(sorted(keep))}
    kept = []
    for old in sorted(keep):
        node = dict(nodes[old])
        node['children'] = [new_index[c] for c in nodes[old].get('children', []) if c in new_index]
        kept.append({k: v for k, v in node.items() if v != []})
    gltf['nodes'] = kept
    gltf['scenes'], gltf['scene'] = [{'nodes': [new_index[hips]]}], 0
    anim = gltf['animations'][0]
    channels = [c for c in anim['channels'] if c['target']['node'] in new_index]
    anim['samplers'] = [anim['samplers'][c['sampler']] for c in channels]
    anim['channels'] = [{'sampler': k, 'target': dict(c['target'], node=new_index[c['target']['node']])}
                        for k, c in enumerate(channels)]
    text = json.dumps(gltf).encode()
    text += b' ' * (-len(text) % 4)
    rest = data[20 + json_length:]
    header = struct.pack('<5I', 0x46546C67, 2, 20 + len(text) + len(rest), len(text), 0x4E4F534A)
    open(dst, 'wb').write(header + text + rest)


if __name__ == '__main__':
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
